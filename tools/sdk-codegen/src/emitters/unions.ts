import type { Field, NamedType, ObjectType, ProtocolModel } from '../model';

// Language-neutral questions the Go and C# emitters ask of the model about
// unions whose branches are told apart by constant fields (MessagePart).

/** The required fields of a type whose value is a constant (they tell union branches apart). */
export function literalFields(type: ObjectType): { field: Field; value: string | number | boolean }[] {
  return type.fields.flatMap((f) => (f.required && f.type.kind === 'literal' ? [{ field: f, value: f.type.value }] : []));
}

/** The branches of a union alias: named object types whose constant fields tell them apart. */
export function unionBranches(model: ProtocolModel, alias: NamedType): ObjectType[] {
  if (alias.kind !== 'alias' || alias.type.kind !== 'union') throw new Error(`${alias.name} is not a union`);
  return alias.type.options.map((o) => {
    const t = o.kind === 'named' ? model.types.find((x) => x.name === o.name) : undefined;
    if (!t || t.kind !== 'object' || literalFields(t).length === 0)
      throw new Error(`${alias.name}: every branch must be a named object with constant fields`);
    return t;
  });
}

/** For each type that is a branch of a union alias, the name of that union. */
export function unionMembership(model: ProtocolModel): Map<string, string> {
  const unionOf = new Map<string, string>();
  for (const a of model.types.filter((t) => t.kind === 'alias')) for (const b of unionBranches(model, a)) unionOf.set(b.name, a.name);
  return unionOf;
}

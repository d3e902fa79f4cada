/**
 * The language-neutral model of protocol v2 that every SDK emitter reads.
 * It is built once from the committed JSON Schema and catalogues of
 * libs/protocol (see read-protocol.ts) and holds no language's names or
 * syntax: emitters decide how a `TypeRef` is spelt in Python, Go or C#.
 */

/** A reference to a type, as a field or a method part uses it. */
export type TypeRef =
  | { readonly kind: 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'any' }
  | { readonly kind: 'literal'; readonly value: string | number | boolean }
  | { readonly kind: 'enum'; readonly values: readonly string[] | readonly number[] }
  | { readonly kind: 'array'; readonly items: TypeRef }
  | { readonly kind: 'map'; readonly values: TypeRef }
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'union'; readonly options: readonly TypeRef[] };

/** One property of an object type. */
export interface Field {
  /** The key on the wire, exactly (`$schema`, `pluginId`, `msg_type`). */
  readonly wireName: string;
  readonly type: TypeRef;
  readonly required: boolean;
  /** The schema's `default`, when it has one (the receiver applies it). */
  readonly default?: unknown;
  readonly description?: string;
}

/** An object type with named fields. */
export interface ObjectType {
  readonly kind: 'object';
  readonly name: string;
  readonly description?: string;
  readonly fields: readonly Field[];
  /**
   * False when the schema refuses unknown fields (`additionalProperties:
   * false`: outgoing messages, manifests); true for open envelopes.
   */
  readonly open: boolean;
  /** Where the type was found: `<file>#<JSON pointer>`. */
  readonly source: string;
}

/** A named union or other non-object type (`MessagePart`). */
export interface AliasType {
  readonly kind: 'alias';
  readonly name: string;
  readonly description?: string;
  readonly type: TypeRef;
  readonly source: string;
}

export type NamedType = ObjectType | AliasType;

/** One JSON-RPC method of the stdio transport. */
export interface Method {
  readonly method: string;
  readonly direction: 'hostToPlugin' | 'pluginToHost';
  readonly permission?: string;
  readonly summary: string;
  readonly params: TypeRef;
  readonly result: TypeRef;
}

/** A whole JSON document of the protocol (a file in libs/protocol/schema) and its root type. */
export interface SchemaDocument {
  /** File name in libs/protocol/schema, e.g. `manifest.schema.json`. */
  readonly file: string;
  /** The named type of the document's root. */
  readonly root: string;
  /** The schema itself, untouched, for SDKs that validate at run time. */
  readonly schema: unknown;
}

export interface ErrorCode {
  readonly code: string;
  readonly message: string;
  /** The HTTP status an answer with this code has, where it has one. */
  readonly status?: number;
}

export interface ErrorFamily {
  readonly family: string;
  readonly codes: readonly ErrorCode[];
}

export interface RpcCode {
  readonly name: string;
  readonly code: number;
  readonly help: string;
}

export interface Permission {
  readonly name: string;
  readonly description: string;
  readonly methods: readonly string[];
}

/** Names on the wire (catalog/wire.json). */
export interface WireNames {
  readonly stdioFlag: string;
  readonly stdioTransport: string;
  readonly httpPaths: Readonly<Record<string, string>>;
  readonly httpHeaders: Readonly<Record<string, string>>;
  readonly signatureVersion: string;
}

/** Everything an emitter gets. Lists are sorted so output never depends on file order. */
export interface ProtocolModel {
  readonly protocolVersion: number;
  /** The version of every SDK (catalog/versions.json, copied from the one source libs/protocol/src/versions.json). */
  readonly sdkVersion: string;
  readonly types: readonly NamedType[];
  readonly methods: readonly Method[];
  readonly documents: readonly SchemaDocument[];
  /** methods.json as it is: the method table with params and result schemas, and the shared $defs. */
  readonly methodsSchema: unknown;
  readonly errorFamilies: readonly ErrorFamily[];
  readonly sdkErrors: readonly ErrorCode[];
  /** The packaging codes every packer reports (catalog/pack-error-codes.json); they never cross the wire. */
  readonly packErrors: readonly ErrorCode[];
  readonly rpcCodes: readonly RpcCode[];
  readonly limits: Readonly<Record<string, number>>;
  readonly runtimeDefaults: Readonly<Record<string, number>>;
  readonly httpDefaults: Readonly<Record<string, number>>;
  readonly permissions: readonly Permission[];
  readonly capabilities: readonly { readonly name: string; readonly value: number }[];
  readonly wire: WireNames;
}

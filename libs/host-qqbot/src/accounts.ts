import {
  QQBOT_DEFAULT_API_BASE_URL,
  QQBOT_DEFAULT_TOKEN_URL,
  QqBotAccountInputSchema,
  type QqBotAccountInput,
  type QqBotLastEvent,
} from '@host/admin-api';
import { HostError } from '@host/host-core';
import { readJsonFile, writeJsonAtomic } from '@host/host-fs';
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { QqBotApiClient, type QqBotApiClientOptions } from './openapi-client';
import { ReplayGuard, type ReplayGuardOptions } from './replay-guard';
import { keysFromSecret } from './signing';

export type AccountSource = 'file' | 'api';

/** One configured bot: its settings, keys, OpenAPI client, replay memory and what its webhook saw. */
export class QqBotAccount {
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
  readonly client: QqBotApiClient;
  readonly replays: ReplayGuard;
  readonly apiBaseUrl: string;
  readonly tokenUrl: string;
  lastEvent: QqBotLastEvent | null = null;
  readonly counters = { received: 0, dispatched: 0, deferred: 0, refused: 0, unsupported: 0 };
  /** Button clicks acknowledged to the platform, and acknowledgements it did not take (logged). */
  readonly interactionAcks = { sent: 0, failed: 0 };

  constructor(
    readonly config: QqBotAccountInput,
    readonly source: AccountSource,
    options: { dispatcher?: Dispatcher; client?: Partial<QqBotApiClientOptions>; replay?: ReplayGuardOptions } = {},
  ) {
    const keys = keysFromSecret(config.secret);
    this.publicKey = keys.publicKey;
    this.privateKey = keys.privateKey;
    this.apiBaseUrl = config.apiBaseUrl ?? QQBOT_DEFAULT_API_BASE_URL;
    this.tokenUrl = config.tokenUrl ?? QQBOT_DEFAULT_TOKEN_URL;
    this.client = new QqBotApiClient({
      ...options.client,
      appId: config.appId,
      secret: config.secret,
      apiBaseUrl: this.apiBaseUrl,
      tokenUrl: this.tokenUrl,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    this.replays = new ReplayGuard(`qqbot:${config.appId}`, options.replay);
  }

  get id(): string {
    return this.config.id;
  }
}

/** One entry of the accounts file: an account with `secret`, or with `secretFile` instead. */
const AccountsFileEntrySchema = QqBotAccountInputSchema.omit({ secret: true }).extend({
  secret: QqBotAccountInputSchema.shape.secret.optional(),
  secretFile: z.string().min(1).optional().describe('A file holding the secret (relative to the accounts file).'),
});
const AccountsFileSchema = z.strictObject({ accounts: z.array(z.unknown()) });

/**
 * Reads HOST_QQBOT_ACCOUNTS_FILE (`{"accounts": [...]}`). Every problem of
 * every entry is reported with where it is, never with a secret in it.
 */
export function readAccountsFile(
  file: string,
  resolvePath: (p: string) => string,
): { ok: true; accounts: QqBotAccountInput[] } | { ok: false; errors: string[] } {
  const where = `QQ Bot accounts file ${file}`;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { ok: false, errors: [`${where} cannot be read: ${err.code ?? 'not valid JSON'}`] };
  }
  const parsed = AccountsFileSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, errors: [`${where} must be {"accounts": [...]}`] };
  const errors: string[] = [];
  const accounts: QqBotAccountInput[] = [];
  const issues = (index: number, error: z.ZodError) =>
    error.issues.map((i) => `${where}: accounts.${index}${i.path.length ? `.${i.path.join('.')}` : ''} ${i.message}`);
  parsed.data.accounts.forEach((entry, index) => {
    const a = AccountsFileEntrySchema.safeParse(entry);
    if (!a.success) return void errors.push(...issues(index, a.error));
    const { secretFile, ...rest } = a.data;
    let secret = a.data.secret;
    if ((secret === undefined) === (secretFile === undefined)) {
      return void errors.push(`${where}: accounts.${index} needs exactly one of "secret" and "secretFile"`);
    }
    if (secretFile !== undefined) {
      try {
        secret = readFileSync(resolvePath(secretFile), 'utf8').replace(/\r?\n$/, '');
      } catch (e) {
        return void errors.push(`${where}: accounts.${index}.secretFile cannot be read (${(e as NodeJS.ErrnoException).code})`);
      }
    }
    const checked = QqBotAccountInputSchema.safeParse({ ...rest, secret });
    if (!checked.success) return void errors.push(...issues(index, checked.error));
    accounts.push(checked.data);
  });
  const seen = new Set<string>();
  for (const a of accounts) {
    for (const key of [`id ${a.id}`, `appId ${a.appId}`]) {
      if (seen.has(key)) errors.push(`${where}: two accounts have the ${key}`);
      seen.add(key);
    }
  }
  return errors.length ? { ok: false, errors } : { ok: true, accounts };
}

/** Seals and opens secrets with the host key (the store's SecretBox). */
export interface SecretSealer {
  seal(plain: string): string;
  /** `what` names the value in the error when it cannot be opened (another host key sealed it). */
  open(sealed: string, what: string): string;
}

export interface QqBotAccountsOptions {
  /** Where accounts added through the admin API are kept (mode 600); none: they last until the host stops. */
  storeFile?: string;
  /**
   * Seals each AppSecret in `storeFile` with the host key, as the store seals HTTP signing secrets and
   * settings. A file written before (plain secrets) is still read, and written sealed at once.
   */
  secrets?: SecretSealer;
  dispatcher?: Dispatcher;
  client?: Partial<QqBotApiClientOptions>;
  /** The accounts' replay memory: give the host's store (`store`), so a replay is refused after a restart. */
  replay?: ReplayGuardOptions;
  /**
   * Bot account ids other providers of the host already use (the console bot): a QQ account may not take one,
   * since messages.send picks the provider by the bot account id.
   */
  reservedIds?: readonly string[];
}

/** The store file: the AppSecret sealed (`sealed:v1:...`), or plain as hosts before sealing wrote it. */
const StoredAccountsSchema = z.object({
  accounts: z.array(QqBotAccountInputSchema.omit({ secret: true }).extend({ secret: z.string() })),
});
const SEALED_PREFIX = 'sealed:';

/** The bot accounts of one host: those of the accounts file (read-only) and those added through the admin API. */
export class QqBotAccounts {
  private readonly byId = new Map<string, QqBotAccount>();
  private idList: readonly string[] | undefined;

  constructor(private readonly o: QqBotAccountsOptions = {}) {}

  /** Adds the accounts of the accounts file, then those the admin API added before (kept in `storeFile`). */
  async load(fromFile: readonly QqBotAccountInput[]): Promise<void> {
    for (const a of fromFile) this.insert(a, 'file');
    if (!this.o.storeFile) return;
    const stored = await readJsonFile(this.o.storeFile);
    if (stored === undefined) return;
    const parsed = StoredAccountsSchema.safeParse(stored);
    if (!parsed.success) throw new Error(`${this.o.storeFile} is not a valid QQ Bot accounts store; fix or remove it`);
    let plain = 0;
    for (const entry of parsed.data.accounts) {
      const sealed = entry.secret.startsWith(SEALED_PREFIX);
      if (sealed && !this.o.secrets) throw new Error(`${this.o.storeFile} holds sealed AppSecrets, and no host key was given to open them`);
      if (!sealed) plain++;
      const secret = sealed
        ? this.o.secrets!.open(entry.secret, `The AppSecret of QQ Bot account "${entry.id}" in ${this.o.storeFile}`)
        : entry.secret;
      const checked = QqBotAccountInputSchema.safeParse({ ...entry, secret });
      if (!checked.success) throw new Error(`${this.o.storeFile} is not a valid QQ Bot accounts store; fix or remove it`);
      this.insert(checked.data, 'api');
    }
    // A file of a host that did not seal yet: sealed now, so the plain secret does not wait for the next change.
    if (plain > 0 && this.o.secrets) await this.persist();
  }

  list(): QqBotAccount[] {
    return [...this.byId.values()];
  }

  /** The account ids, in the order they were added (kept between changes: a send asks for them). */
  ids(): readonly string[] {
    return (this.idList ??= [...this.byId.keys()]);
  }

  get(id: string): QqBotAccount | undefined {
    return this.byId.get(id);
  }

  async add(input: QqBotAccountInput): Promise<QqBotAccount> {
    const account = this.insert(input, 'api');
    try {
      await this.persist();
    } catch (e) {
      this.byId.delete(account.id);
      this.idList = undefined;
      throw e;
    }
    return account;
  }

  async remove(id: string): Promise<void> {
    const account = this.byId.get(id);
    if (!account)
      throw new HostError('QQBOT_ACCOUNT_NOT_FOUND', `No QQ Bot account "${id}". List the accounts with GET /api/qqbot/accounts.`);
    if (account.source === 'file') {
      throw new HostError(
        'QQBOT_ACCOUNT_READ_ONLY',
        `QQ Bot account "${id}" comes from the accounts file (HOST_QQBOT_ACCOUNTS_FILE); remove it there and restart the host.`,
      );
    }
    this.byId.delete(id);
    this.idList = undefined;
    await this.persist();
    await account.client.close();
  }

  async close(): Promise<void> {
    await Promise.all(this.list().map((a) => a.client.close()));
  }

  private insert(input: QqBotAccountInput, source: AccountSource): QqBotAccount {
    if (this.o.reservedIds?.includes(input.id)) {
      throw new HostError(
        'QQBOT_ACCOUNT_EXISTS',
        `The bot account id "${input.id}" belongs to another provider of this host (the console bot); choose another id.`,
      );
    }
    const clash = this.list().find((a) => a.id === input.id || a.config.appId === input.appId);
    if (clash) {
      throw new HostError(
        'QQBOT_ACCOUNT_EXISTS',
        clash.id === input.id
          ? `A QQ Bot account "${input.id}" already exists.`
          : `QQ Bot account "${clash.id}" already has app id ${input.appId}.`,
      );
    }
    const account = new QqBotAccount(input, source, { dispatcher: this.o.dispatcher, client: this.o.client, replay: this.o.replay });
    this.byId.set(input.id, account);
    this.idList = undefined;
    return account;
  }

  private async persist(): Promise<void> {
    if (!this.o.storeFile) return;
    const accounts = this.list()
      .filter((a) => a.source === 'api')
      .map((a) => (this.o.secrets ? { ...a.config, secret: this.o.secrets.seal(a.config.secret) } : a.config));
    await writeJsonAtomic(this.o.storeFile, { accounts }, { mode: 0o600 });
  }
}

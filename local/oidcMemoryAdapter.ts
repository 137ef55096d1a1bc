/**
 * The local OpenID Connect provider's storage: its sessions, interactions, grants, codes and tokens in this
 * process's memory, as oidc-provider's adapter interface asks. A restart of `npm start` signs everyone out, which
 * is right for development users whose passwords change at every start too. (oidc-provider's own memory adapter
 * does the same but warns on every start that it is for development only.)
 */
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';

interface Stored {
  payload: AdapterPayload;
  /** Epoch ms after which it is gone; undefined: kept while the process runs. */
  expiresAt?: number;
}

/**
 * A factory of adapters sharing one store: one adapter per model (Session, Grant, AuthorizationCode, ...).
 *
 * @example
 * new Provider(issuer, { adapter: memoryAdapterFactory() })
 */
export const memoryAdapterFactory = (): AdapterFactory => {
  const items = new Map<string, Stored>();
  const sessionsByUid = new Map<string, string>();
  const userCodes = new Map<string, string>();
  const read = (key: string): AdapterPayload | undefined => {
    const stored = items.get(key);
    if (stored?.expiresAt !== undefined && stored.expiresAt <= Date.now()) {
      items.delete(key);
      return undefined;
    }
    return stored?.payload;
  };
  return (model: string): Adapter => {
    const keyOf = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined;
        items.set(keyOf(id), { payload, expiresAt });
        if (model === 'Session' && payload.uid) sessionsByUid.set(payload.uid, id);
        if (payload.userCode) userCodes.set(payload.userCode, id);
      },
      async find(id) {
        return read(keyOf(id));
      },
      async findByUid(uid) {
        const id = sessionsByUid.get(uid);
        return id === undefined ? undefined : read(keyOf(id));
      },
      async findByUserCode(userCode) {
        const id = userCodes.get(userCode);
        return id === undefined ? undefined : read(keyOf(id));
      },
      async consume(id) {
        const payload = read(keyOf(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        items.delete(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        for (const [key, stored] of items) if (stored.payload.grantId === grantId) items.delete(key);
      },
    };
  };
};

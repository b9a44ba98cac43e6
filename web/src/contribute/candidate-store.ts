/**
 * The browser's copy of a computed contribution until the coordinator has all of it, in
 * IndexedDB, so a reload mid-upload resumes the same upload instead of computing again. The file
 * holds no secret (it is what everyone downloads once it is accepted); it is deleted once the
 * upload completes, once the circuit is accepted, when it no longer fits the chain, or after a day
 * (a key can be hundreds of MB: nothing may stay in the browser for good).
 */

export interface StoredCandidate {
  /** `${ceremony}:${contributor}:${circuit}` */
  key: string;
  /** The head index the contribution was made on: valid only while that is still the head. */
  baseIndex: number;
  zkey: Uint8Array;
  hash: string;
  savedAt: number;
}

const DB_NAME = 'ceremony-contributions';
const STORE = 'candidates';
/** Index on savedAt (version 2), so pruning finds old entries without reading their keys' bytes. */
const BY_SAVED_AT = 'savedAt';

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 2);
    request.onupgradeneeded = (event) => {
      const store =
        event.oldVersion < 1
          ? request.result.createObjectStore(STORE, { keyPath: 'key' })
          : // An open request has its versionchange transaction for as long as onupgradeneeded runs.
            request.transaction!.objectStore(STORE);
      if (event.oldVersion < 2) store.createIndex(BY_SAVED_AT, 'savedAt');
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Runs `action` in one transaction; resolves with what `action`'s returned reader gives once it commits. */
async function transact<T>(mode: IDBTransactionMode, action: (store: IDBObjectStore) => () => T): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const result = action(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(result());
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}

function run<T>(mode: IDBTransactionMode, action: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return transact(mode, (store) => {
    const request = action(store);
    return () => request.result;
  });
}

export function candidateKey(ceremony: string, contributor: string, circuit: string): string {
  return `${ceremony}:${contributor}:${circuit}`;
}

export const candidateStore = {
  async get(key: string): Promise<StoredCandidate | undefined> {
    return (await run('readonly', (store) => store.get(key))) as StoredCandidate | undefined;
  },
  async put(candidate: StoredCandidate): Promise<void> {
    await run('readwrite', (store) => store.put(candidate));
  },
  async delete(key: string): Promise<void> {
    await run('readwrite', (store) => store.delete(key));
  },
  /** Deletes every candidate saved before `savedBefore` (ms), whoever's; resolves with how many. */
  prune(savedBefore: number): Promise<number> {
    return transact('readwrite', (store) => {
      const keys = store.index(BY_SAVED_AT).getAllKeys(IDBKeyRange.upperBound(savedBefore, true));
      keys.onsuccess = () => {
        for (const key of keys.result) store.delete(key);
      };
      return () => keys.result.length;
    });
  },
};

/**
 * The browser's copy of a computed contribution until the coordinator has all of it, in
 * IndexedDB, so a reload mid-upload resumes the same upload instead of computing again. The file
 * holds no secret (it is what everyone downloads once it is accepted); it is deleted once the
 * upload completes, or when it no longer fits the chain.
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

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'key' });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function run<T>(mode: IDBTransactionMode, action: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const request = action(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
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
};

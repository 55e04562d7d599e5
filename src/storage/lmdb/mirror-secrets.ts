/**
 * The push mirrors' tokens as a SecretHolder, so that `registry secrets status|rotate` and the start-up
 * inventory see them with the other secrets (src/domain/secrets.ts, still LMDB-bound: its holders are
 * read synchronously). Read on today's `mirror-remotes` database; replacements are port transactions on
 * the same environment.
 */
import type { RootDatabase } from 'lmdb'
import { sameStoredSecret, type SecretHolder, type SecretRef, type SecretSlot } from '../../store/secret-slots.js'
import { mirrorSecretRef, type MirrorRemote, type StoredSecret } from '../records.js'
import { environmentOn, type LmdbEnvironment } from './databases.js'
import { LmdbMirrorJournal } from './mirror-journal.js'
import { optimistic } from './optimistic.js'
import type { Key } from './transaction-view.js'

export class LmdbMirrorSecrets implements SecretHolder {
  private readonly environment: LmdbEnvironment

  constructor(root: RootDatabase<any, Key>) {
    this.environment = environmentOn(root)
  }

  * secretSlots(): Iterable<SecretSlot> {
    for (const { key, value } of this.environment.mirror.remotes.getRange()) {
      const remote = value as MirrorRemote
      if (remote.token !== null) yield { ref: mirrorSecretRef(String(key)), organization_id: String(key), value: remote.token }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    if (ref.holder !== 'mirror-remote') return Promise.resolve(false)
    return optimistic(this.environment.root, async (view) => {
      const mirror = new LmdbMirrorJournal(view, this.environment, () => {})
      const remote = await mirror.remote(ref.organization_id)
      if (!remote || !sameStoredSecret(remote.token, expected)) return false
      await mirror.putRemote(ref.organization_id, { ...remote, token: next })
      return true
    })
  }
}

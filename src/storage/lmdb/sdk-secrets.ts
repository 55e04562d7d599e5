/**
 * The output repositories' tokens as a SecretHolder, so that `registry secrets status|rotate` and the
 * start-up inventory see them with the other secrets (src/domain/secrets.ts, still LMDB-bound: its
 * holders are read synchronously). Read on today's `sdk-repositories` database; replacements are port
 * transactions on the same environment.
 */
import type { RootDatabase } from 'lmdb'
import { sameStoredSecret, type SecretHolder, type SecretRef, type SecretSlot } from '../../store/secret-slots.js'
import { outputRepositorySecretRef, type OutputRepositoryRecord, type SdkRecord, type SdkTarget, type StoredSecret } from '../records.js'
import { environmentOn, type LmdbEnvironment } from './databases.js'
import { optimistic } from './optimistic.js'
import { LmdbSdks } from './sdks.js'
import type { Key } from './transaction-view.js'

export class LmdbSdkSecrets implements SecretHolder {
  private readonly environment: LmdbEnvironment

  constructor(root: RootDatabase<any, Key>) {
    this.environment = environmentOn(root)
  }

  * secretSlots(): Iterable<SecretSlot> {
    const { sdks, sdkRepositories } = this.environment.sdks
    for (const { value } of sdkRepositories.getRange()) {
      const repository = value as OutputRepositoryRecord
      if (repository.token === null) continue
      const organization = (sdks.get(repository.sdk_id) as SdkRecord | undefined)?.organization_id ?? ''
      yield { ref: outputRepositorySecretRef(repository), organization_id: organization, value: repository.token }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    if (ref.holder !== 'sdk-output-repository') return Promise.resolve(false)
    return optimistic(this.environment.root, async (view) => {
      const sdks = new LmdbSdks(view, this.environment)
      const repository = await sdks.repository(ref.sdk_id, ref.target as SdkTarget)
      if (!repository || !sameStoredSecret(repository.token, expected)) return false
      await sdks.putRepository({ ...repository, token: next })
      return true
    })
  }
}

/**
 * The port's sdks section (issue 16): what the sdks feature reads and writes, inside a
 * transaction (`SdkStore`) or from the committed state (`SdkReader`). Being moved onto the port.
 */
export interface SdkReader {}

export interface SdkStore extends SdkReader {}

// The profile format's name, version and idle rule, imported from the single shared definition
// (format/profile-format.json) at build time by esbuild, and at test time by Node.
import definition from '../../format/profile-format.json' with { type: 'json' };

export const PROFILE_FORMAT = definition.format;
export const PROFILE_VERSION = definition.version;
/** An experiment without a progress visit whose program used less of one CPU was idle (docs/profile-format.md). */
export const IDLE_CPU_SHARE = definition.idle_cpu_share;

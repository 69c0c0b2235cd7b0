// The profile format's name and version, imported from the single shared definition
// (format/profile-format.json) at build time by esbuild, and at test time by Node.
import definition from '../../format/profile-format.json' with { type: 'json' };

export const PROFILE_FORMAT = definition.format;
export const PROFILE_VERSION = definition.version;

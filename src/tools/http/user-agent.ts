import packageJson from '../../../package.json' with { type: 'json' };

/** Cadre's version, as published. */
export const CADRE_VERSION: string = packageJson.version;

/** Sent with every outgoing request, so API operators can see who is calling (Wikimedia asks for this). */
export const USER_AGENT = `Cadre/${CADRE_VERSION} (LLM sub-agent runtime; web and knowledge tools)`;

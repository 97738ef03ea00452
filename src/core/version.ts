// The product's version, as package.json says: the CLI's --version and the MCP server's
// serverInfo read it here, so a release bumps one place. Only the field is bundled (esbuild
// keeps a JSON module's named imports and drops the rest).
import { version } from '../../package.json';

export const PRODUCT_VERSION: string = version;

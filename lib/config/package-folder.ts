/**
 * Whether this process runs the build (`node dist/lib/main.js`) or the TypeScript sources (tests,
 * through tsx): the files read at run time sit at different depths below the package's folder.
 */
export const runsBuild = !import.meta.url.endsWith('.ts');

/** The folder holding package.json, console/dist and sign-in/dist: above lib/, or above dist/lib/. */
export const packageFolder = new URL(runsBuild ? '../../../' : '../../', import.meta.url);

/** The stylesheet is imported for esbuild to bundle as console.css; it exports nothing. */
declare module '*.css';

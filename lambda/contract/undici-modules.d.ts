// undici's internal CommonJS files that contract/undici-lean.ts loads: each exports one class or function (no types of their own).
declare module 'undici/lib/dispatcher/agent.js' {
  const value: unknown;
  export default value;
}
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  const value: unknown;
  export default value;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const value: unknown;
  export default value;
}
declare module 'undici/lib/api/index.js' {
  const value: unknown;
  export default value;
}

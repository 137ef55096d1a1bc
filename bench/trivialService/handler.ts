/** The trivial handler of bench/trivialService: 200 `{}` at once, whatever the request. */
export const handler = async () => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: '{}',
});

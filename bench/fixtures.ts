/** What the baseline provider and the service are both set up with. */
export const baselineClient = { id: 'bench-client', secret: 'bench-secret-0123456789abcdef' };
export const baselineResource = 'https://bench.example.com';

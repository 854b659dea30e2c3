import { expect } from 'chai';

import { BoundedCache } from '../../lib/storage/bounded-cache.ts';

describe('bounded cache: at most so many entries and so many bytes', () => {
  it('evicts the least recently used entries past the count', () => {
    const cache = new BoundedCache<string>({ maxEntries: 2, maxBytes: 1_000 });
    cache.set('a', 'A', 1);
    cache.set('b', 'B', 1);
    expect(cache.get('a')).to.equal('A');
    cache.set('c', 'C', 1);
    expect(cache.get('b')).to.equal(undefined);
    expect(cache.get('a')).to.equal('A');
    expect(cache.get('c')).to.equal('C');
  });

  it('evicts past the bytes: 8,000 entries of 40 KB keep at most the byte limit', () => {
    const cache = new BoundedCache<string>({ maxEntries: 50_000, maxBytes: 4 * 1024 * 1024 });
    for (let index = 0; index < 8_000; index++) {
      cache.set(`token-${index}`, 'claims', 40 * 1024);
    }
    expect(cache.bytes).to.be.at.most(4 * 1024 * 1024);
    expect(cache.size).to.equal(102);
    expect(cache.get('token-7999')).to.equal('claims');
    expect(cache.get('token-0')).to.equal(undefined);
  });

  it('does not keep an entry larger than the whole limit, and forgets a replaced or deleted one', () => {
    const cache = new BoundedCache<string>({ maxEntries: 10, maxBytes: 100 });
    cache.set('huge', 'H', 101);
    expect(cache.get('huge')).to.equal(undefined);
    cache.set('a', 'A', 60);
    cache.set('a', 'A2', 30);
    expect(cache.bytes).to.equal(30);
    cache.delete('a');
    expect(cache.size).to.equal(0);
    expect(cache.bytes).to.equal(0);
  });
});

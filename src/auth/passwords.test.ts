import { describe, expect, it } from 'vitest';
import { hashPassword, passwordWeakness, PBKDF2_ITERATIONS, verifyPassword } from './passwords';

describe('password hashing', () => {
  it('verifies the right password and refuses others', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('salts each hash: the same password twice gives two different hashes', async () => {
    const [a, b] = [await hashPassword('same password here'), await hashPassword('same password here')];
    expect(a).not.toBe(b);
    expect(a.startsWith(`pbkdf2-sha256$${PBKDF2_ITERATIONS}$`)).toBe(true);
  });

  it('matches an independent PBKDF2-SHA-256 computation (RFC 8018 parameters as stored)', async () => {
    const stored = await hashPassword('pässwörd with ünïcode');
    const [, iterations, salt, hash] = stored.split('$');
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('pässwörd with ünïcode'), 'PBKDF2', false, ['deriveBits']);
    const bits = await crypto.subtle.deriveBits(
      { name: 'PBKDF2', hash: 'SHA-256', iterations: Number(iterations), salt: Uint8Array.from(atob(salt), (c) => c.charCodeAt(0)) },
      key,
      256,
    );
    expect(btoa(String.fromCharCode(...new Uint8Array(bits)))).toBe(hash);
  });

  it('is false, never an error, for a missing account or a damaged stored value', async () => {
    expect(await verifyPassword('anything at all', null)).toBe(false);
    for (const damaged of ['', 'plain', 'pbkdf2-sha256$100000$!!$!!', 'pbkdf2-sha256$99999999$AAAA$AAAA', 'md5$1$AAAA$AAAA']) {
      expect(await verifyPassword('anything at all', damaged)).toBe(false);
    }
  });

  it('spends about the same time on an unknown account as on a wrong password', async () => {
    const stored = await hashPassword('correct horse battery');
    const time = async (run: () => Promise<unknown>) => {
      const start = performance.now();
      for (let i = 0; i < 3; i++) await run();
      return performance.now() - start;
    };
    const wrong = await time(() => verifyPassword('wrong horse battery', stored));
    const unknown = await time(() => verifyPassword('wrong horse battery', null));
    expect(unknown / wrong).toBeGreaterThan(0.5);
    expect(unknown / wrong).toBeLessThan(2);
  });
});

describe('password strength', () => {
  it('accepts a passphrase and explains what is wrong with weak ones', () => {
    expect(passwordWeakness('correct horse battery', 'ann@example.com')).toBeNull();
    for (const weak of ['short', 'password123', 'QWERTYUIOP', 'abababababab', 'ann@example.com!', 'ann@example.com']) {
      expect(passwordWeakness(weak, 'ann@example.com')).toMatch(/^Choose a password of at least 10 characters/);
    }
    expect(passwordWeakness('x'.repeat(257), 'ann@example.com')).toBe('Choose a password of at most 256 characters.');
  });
});

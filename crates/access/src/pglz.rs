//! PostgreSQL's LZ compression format ("pglz"), written from the format's
//! description in PostgreSQL's `pg_lzcompress.c`: a control byte announces
//! the next eight items, least significant bit first; a 0 bit is a literal
//! byte, a 1 bit a back-reference of two or three bytes: the first byte's
//! high nibble is the offset's bits 8-11 and its low nibble the length
//! minus 3 (15: a third byte adds 18 more), the second byte the offset's
//! low bits. Offsets reach 4095 bytes back, lengths 3 to 273.
//!
//! The compressor is greedy with one candidate per hash of three bytes,
//! and gives up as PostgreSQL's default strategy does: when nothing was
//! gained in the first 1 KB, or the result would not be a quarter smaller.

const MAX_OFFSET: usize = 4095;
const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 273;
const HASH_BITS: u32 = 12;

fn hash(b: &[u8]) -> usize {
    let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

/// Compresses `src`; None when that does not save at least a quarter.
pub fn compress(src: &[u8]) -> Option<Vec<u8>> {
    let n = src.len();
    let budget = n - n / 4;
    let mut out = Vec::with_capacity(budget + 2);
    let mut table = vec![0u32; 1 << HASH_BITS];
    let mut ctrl_at = 0usize;
    let mut items = 8u32;
    let mut i = 0usize;
    while i < n {
        if out.len() >= budget || (i >= 1024 && out.len() >= i) {
            return None;
        }
        if items == 8 {
            ctrl_at = out.len();
            out.push(0);
            items = 0;
        }
        let mut len = 0;
        let mut off = 0;
        if i + MIN_MATCH <= n {
            let h = hash(&src[i..]);
            let cand = table[h] as usize;
            table[h] = i as u32 + 1;
            if cand > 0 && i - (cand - 1) <= MAX_OFFSET {
                let c = cand - 1;
                let limit = (n - i).min(MAX_MATCH);
                while len < limit && src[c + len] == src[i + len] {
                    len += 1;
                }
                off = i - c;
            }
        }
        if len >= MIN_MATCH {
            out[ctrl_at] |= 1 << items;
            let hi = ((off >> 4) & 0xf0) as u8;
            if len < 18 {
                out.push(hi | (len - 3) as u8);
                out.push(off as u8);
            } else {
                out.push(hi | 0x0f);
                out.push(off as u8);
                out.push((len - 18) as u8);
            }
            for j in i + 1..(i + len).min(n.saturating_sub(MIN_MATCH - 1)) {
                table[hash(&src[j..])] = j as u32 + 1;
            }
            i += len;
        } else {
            out.push(src[i]);
            i += 1;
        }
        items += 1;
    }
    (out.len() < budget).then_some(out)
}

/// Decompresses `src` into `raw_len` bytes; None when it is malformed.
pub fn decompress(src: &[u8], raw_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(raw_len);
    let mut s = 0usize;
    while s < src.len() && out.len() < raw_len {
        let ctrl = src[s];
        s += 1;
        for bit in 0..8 {
            if s >= src.len() || out.len() >= raw_len {
                break;
            }
            if ctrl & (1 << bit) == 0 {
                out.push(src[s]);
                s += 1;
                continue;
            }
            if s + 1 >= src.len() {
                return None;
            }
            let mut len = (src[s] & 0x0f) as usize + 3;
            let off = ((src[s] & 0xf0) as usize) << 4 | src[s + 1] as usize;
            s += 2;
            if len == 18 {
                len += *src.get(s)? as usize;
                s += 1;
            }
            if off == 0 || off > out.len() {
                return None;
            }
            let len = len.min(raw_len - out.len());
            let from = out.len() - off;
            // Byte by byte: a reference may overlap what it produces.
            for k in 0..len {
                out.push(out[from + k]);
            }
        }
    }
    (out.len() == raw_len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut cases: Vec<Vec<u8>> = vec![
            b"abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc".to_vec(),
            vec![b'x'; 100_000],
            (0..50_000u32)
                .flat_map(|i| (i % 97).to_le_bytes())
                .collect(),
        ];
        let words = [
            "the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dog ",
        ];
        let mut seed = 7u64;
        let text: Vec<u8> = (0..5_000)
            .flat_map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                words[(seed >> 61) as usize].bytes()
            })
            .collect();
        cases.push(text);
        for c in cases {
            let z = compress(&c).expect("compressible");
            assert!(z.len() < c.len() * 3 / 4);
            assert_eq!(decompress(&z, c.len()).unwrap(), c);
        }
    }

    #[test]
    fn gives_up_on_random_bytes() {
        let mut seed = 1u64;
        let noise: Vec<u8> = (0..10_000)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (seed >> 56) as u8
            })
            .collect();
        assert!(compress(&noise).is_none());
    }

    #[test]
    fn rejects_malformed_input() {
        assert!(decompress(&[0x01, 0x00, 0x05], 10).is_none());
        assert!(decompress(&[0x00, b'a'], 5).is_none());
    }
}

//! The record format: what a resource manager hands to [`crate::Wal::insert`]
//! ([`RecordBuilder`]) and what redo and waldump get back ([`Record`]).
//!
//! ```text
//! header (32 bytes)
//!   0..4   total length (header and body, without the padding to 8 bytes)
//!   4..8   CRC32C of bytes 0..4 and 8..total length
//!   8..16  start LSN of the previous record (a stale record left in a
//!          recycled or torn file cannot chain onto the current ones)
//!   16..24 transaction id (0: none)
//!   24     resource manager id     25  info (the rmgr's record kind)
//!   26     number of block references   27 reserved
//!   28..32 length of the main data
//! per block reference (24 bytes, then image bytes, then block data)
//!   0..12  relation (tablespace, database, relfilenode)   12..16 block
//!   16 fork   17 flags   18..20 data length   20..22 image length
//!   22..24 hole offset (the image leaves out the page's free hole)
//! main data
//! ```

use common::{BlockNumber, RelFileLocator, Xid};
use storage::{page, ForkNumber, BLCKSZ};

use crate::Lsn;

pub const HEADER_SIZE: usize = 32;
pub const BLOCK_HEADER_SIZE: usize = 24;
/// Records are at most this long (a sanity bound when reading a torn tail).
pub const MAX_RECORD_SIZE: usize = 1 << 30;

/// The block's image is in the record (a full-page image).
pub const BLOCK_HAS_IMAGE: u8 = 1;
/// Redo rebuilds the page from nothing: no image is needed, and the page
/// is not read first.
pub const BLOCK_WILL_INIT: u8 = 2;

/// Identifies a page: relation, fork, block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTag {
    pub rel: RelFileLocator,
    pub fork: ForkNumber,
    pub block: BlockNumber,
}

pub(crate) struct BlockRegistration<'a> {
    pub tag: BlockTag,
    pub page: &'a [u8],
    pub will_init: bool,
    pub data: Vec<u8>,
}

/// A record being assembled. Pages are registered with their current
/// (already changed) contents: whether an image goes in is decided at
/// insertion, against the redo pointer of the latest checkpoint.
pub struct RecordBuilder<'a> {
    pub(crate) rmid: u8,
    pub(crate) info: u8,
    pub(crate) xid: Xid,
    pub(crate) blocks: Vec<BlockRegistration<'a>>,
    pub(crate) main: Vec<u8>,
}

impl<'a> RecordBuilder<'a> {
    pub fn new(rmid: u8, info: u8, xid: Xid) -> Self {
        RecordBuilder {
            rmid,
            info,
            xid,
            blocks: Vec::new(),
            main: Vec::new(),
        }
    }

    /// Registers a changed page as block reference number `returned`.
    /// `will_init`: redo initialises the page itself (a new page), so no
    /// image is ever needed.
    pub fn register_block(&mut self, tag: BlockTag, page: &'a [u8], will_init: bool) -> usize {
        debug_assert_eq!(page.len(), BLCKSZ);
        self.blocks.push(BlockRegistration {
            tag,
            page,
            will_init,
            data: Vec::new(),
        });
        self.blocks.len() - 1
    }

    /// Data redo needs for block `id` when it has no image.
    pub fn block_data(&mut self, id: usize) -> &mut Vec<u8> {
        &mut self.blocks[id].data
    }

    pub fn main_data(&mut self) -> &mut Vec<u8> {
        &mut self.main
    }
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The page's hole: the free gap between the line pointers and the tuples,
/// all zeroes on a well-formed page, so an image can leave it out.
fn page_hole(p: &[u8]) -> (usize, usize) {
    if page::is_new(p) {
        return (0, 0);
    }
    let (lower, upper) = (page::lower(p), page::upper(p));
    if lower >= page::PAGE_HEADER_SIZE && upper > lower && upper <= BLCKSZ {
        (lower, upper - lower)
    } else {
        (0, 0)
    }
}

/// Serialises `rec` into `out` (header with prev and CRC left zero),
/// putting images in for the blocks `needs_image` says.
pub(crate) fn assemble(
    rec: &RecordBuilder<'_>,
    needs_image: &dyn Fn(&BlockRegistration<'_>) -> bool,
    out: &mut Vec<u8>,
) -> usize {
    out.clear();
    out.resize(HEADER_SIZE, 0);
    let mut images = 0;
    for b in &rec.blocks {
        let image = needs_image(b);
        let (hole_off, hole_len) = if image { page_hole(b.page) } else { (0, 0) };
        let image_len = if image { BLCKSZ - hole_len } else { 0 };
        put_u32(out, b.tag.rel.spc_oid);
        put_u32(out, b.tag.rel.db_oid);
        put_u32(out, b.tag.rel.rel_number);
        put_u32(out, b.tag.block);
        out.push(b.tag.fork as u8);
        let mut flags = 0;
        if image {
            flags |= BLOCK_HAS_IMAGE;
            images += 1;
        }
        if b.will_init {
            flags |= BLOCK_WILL_INIT;
        }
        out.push(flags);
        put_u16(out, b.data.len() as u16);
        put_u16(out, image_len as u16);
        put_u16(out, hole_off as u16);
        if image {
            out.extend_from_slice(&b.page[..hole_off]);
            out.extend_from_slice(&b.page[hole_off + hole_len..]);
        }
        out.extend_from_slice(&b.data);
    }
    out.extend_from_slice(&rec.main);
    let total = out.len() as u32;
    out[0..4].copy_from_slice(&total.to_le_bytes());
    out[16..24].copy_from_slice(&rec.xid.to_le_bytes());
    out[24] = rec.rmid;
    out[25] = rec.info;
    out[26] = rec.blocks.len() as u8;
    out[28..32].copy_from_slice(&(rec.main.len() as u32).to_le_bytes());
    images
}

/// Fills in the previous record's LSN and the CRC.
pub(crate) fn seal(bytes: &mut [u8], prev: Lsn) {
    bytes[8..16].copy_from_slice(&prev.to_le_bytes());
    let crc = record_crc(bytes);
    bytes[4..8].copy_from_slice(&crc.to_le_bytes());
}

fn record_crc(bytes: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&bytes[0..4]);
    crc32c::crc32c_append(crc, &bytes[8..])
}

/// Rounds a position up to the next record boundary.
pub const fn align(pos: u64) -> u64 {
    (pos + 7) & !7
}

/// One block reference of a decoded record.
#[derive(Debug, Clone)]
pub struct BlockRef<'r> {
    pub tag: BlockTag,
    pub flags: u8,
    /// The page image with its hole, when the record carries one.
    image: Option<(&'r [u8], usize)>,
    pub data: &'r [u8],
}

impl Record<'_> {
    /// Bytes of full-page images in the record.
    pub fn image_bytes(&self) -> usize {
        self.blocks
            .iter()
            .filter_map(|b| b.image.map(|i| i.0.len()))
            .sum()
    }
}

impl BlockRef<'_> {
    pub fn has_image(&self) -> bool {
        self.image.is_some()
    }
    pub fn will_init(&self) -> bool {
        self.flags & BLOCK_WILL_INIT != 0
    }
    /// Writes the full page image (hole restored as zeroes) into `page`.
    pub fn restore_image(&self, page: &mut [u8]) -> bool {
        let Some((img, hole_off)) = self.image else {
            return false;
        };
        let hole_len = BLCKSZ - img.len();
        page[..hole_off].copy_from_slice(&img[..hole_off]);
        page[hole_off..hole_off + hole_len].fill(0);
        page[hole_off + hole_len..].copy_from_slice(&img[hole_off..]);
        true
    }
}

/// A record read back from the log, checked (length, CRC, chain).
#[derive(Debug, Clone)]
pub struct Record<'r> {
    /// Where it starts and where the next one starts.
    pub lsn: Lsn,
    pub end: Lsn,
    pub prev: Lsn,
    pub xid: Xid,
    pub rmid: u8,
    pub info: u8,
    pub blocks: Vec<BlockRef<'r>>,
    pub main: &'r [u8],
    pub total_len: usize,
}

/// Why bytes at a position are not a record: the end of the valid log.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("invalid record length {0}")]
    Length(usize),
    #[error("incorrect resource manager data checksum")]
    Crc,
    #[error("record with incorrect prev-link {found:X}, expected {expected:X}")]
    Prev { found: u64, expected: u64 },
    #[error("invalid block reference")]
    Block,
}

/// The total length a record header announces, if plausible.
pub fn header_length(header: &[u8]) -> Result<usize, DecodeError> {
    let len = u32::from_le_bytes(header[0..4].try_into().unwrap()) as usize;
    if !(HEADER_SIZE..=MAX_RECORD_SIZE).contains(&len) {
        return Err(DecodeError::Length(len));
    }
    Ok(len)
}

fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Decodes the whole record `bytes` found at `lsn`, whose predecessor
/// started at `expected_prev` (None: not checked, the first one read).
pub fn decode(
    bytes: &[u8],
    lsn: Lsn,
    expected_prev: Option<Lsn>,
) -> Result<Record<'_>, DecodeError> {
    let total = header_length(bytes)?;
    if bytes.len() < total {
        return Err(DecodeError::Length(total));
    }
    let bytes = &bytes[..total];
    let crc = get_u32(bytes, 4);
    if record_crc(bytes) != crc {
        return Err(DecodeError::Crc);
    }
    let prev = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
    if let Some(expected) = expected_prev {
        if prev != expected {
            return Err(DecodeError::Prev {
                found: prev,
                expected,
            });
        }
    }
    let xid = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
    let nblocks = bytes[26] as usize;
    let main_len = get_u32(bytes, 28) as usize;
    let mut at = HEADER_SIZE;
    let mut blocks = Vec::with_capacity(nblocks);
    for _ in 0..nblocks {
        if at + BLOCK_HEADER_SIZE > total {
            return Err(DecodeError::Block);
        }
        let h = &bytes[at..at + BLOCK_HEADER_SIZE];
        let rel = RelFileLocator {
            spc_oid: get_u32(h, 0),
            db_oid: get_u32(h, 4),
            rel_number: get_u32(h, 8),
        };
        let block = get_u32(h, 12);
        let fork = match h[16] {
            0 => ForkNumber::Main,
            1 => ForkNumber::Fsm,
            2 => ForkNumber::VisibilityMap,
            _ => return Err(DecodeError::Block),
        };
        let flags = h[17];
        let data_len = get_u16(h, 18) as usize;
        let image_len = get_u16(h, 20) as usize;
        let hole_off = get_u16(h, 22) as usize;
        at += BLOCK_HEADER_SIZE;
        if at + image_len + data_len > total || image_len > BLCKSZ || hole_off > image_len {
            return Err(DecodeError::Block);
        }
        let image = (flags & BLOCK_HAS_IMAGE != 0).then(|| (&bytes[at..at + image_len], hole_off));
        at += image_len;
        let data = &bytes[at..at + data_len];
        at += data_len;
        blocks.push(BlockRef {
            tag: BlockTag { rel, fork, block },
            flags,
            image,
            data,
        });
    }
    if at + main_len != total {
        return Err(DecodeError::Block);
    }
    Ok(Record {
        lsn,
        end: align(lsn + total as u64),
        prev,
        xid,
        rmid: bytes[24],
        info: bytes[25],
        blocks,
        main: &bytes[at..],
        total_len: total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_image_and_hole() {
        let mut pg = vec![0u8; BLCKSZ];
        page::init(&mut pg, 0);
        page::add_item(&mut pg, &[7u8; 100]).unwrap();
        let tag = BlockTag {
            rel: RelFileLocator {
                spc_oid: 1663,
                db_oid: 5,
                rel_number: 16384,
            },
            fork: ForkNumber::Main,
            block: 3,
        };
        let mut rec = RecordBuilder::new(10, 1, 42);
        let id = rec.register_block(tag, &pg, false);
        rec.block_data(id).extend_from_slice(b"abc");
        rec.main_data().extend_from_slice(b"main");
        let mut out = Vec::new();
        assert_eq!(assemble(&rec, &|_| true, &mut out), 1);
        seal(&mut out, 99);
        assert!(out.len() < BLCKSZ, "the hole is left out");
        let r = decode(&out, 1000, Some(99)).unwrap();
        assert_eq!((r.xid, r.rmid, r.info, r.main), (42, 10, 1, &b"main"[..]));
        assert_eq!(r.blocks[0].tag, tag);
        assert_eq!(r.blocks[0].data, b"abc");
        let mut back = vec![1u8; BLCKSZ];
        assert!(r.blocks[0].restore_image(&mut back));
        assert_eq!(back, pg);
        assert_eq!(
            decode(&out, 1000, Some(98)).unwrap_err(),
            DecodeError::Prev {
                found: 99,
                expected: 98
            }
        );
        out[40] ^= 1;
        assert_eq!(decode(&out, 1000, None).unwrap_err(), DecodeError::Crc);
    }
}

//! A bounds-checked cursor over borrowed bytes in either byte order.

use crate::error::ParseError;

/// Byte order of the producer of a perf.data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Endian {
    #[default]
    Little,
    Big,
}

impl Endian {
    pub fn native() -> Self {
        if cfg!(target_endian = "big") {
            Endian::Big
        } else {
            Endian::Little
        }
    }
    #[inline]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    #[inline]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    #[inline]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
    pub fn put_u16(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    pub fn put_u32(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    pub fn put_u64(self, v: u64) -> [u8; 8] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
}

/// Reads fixed-width integers and strings from a byte slice, failing (never
/// panicking) when the slice is too short.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], endian: Endian) -> Self {
        Cursor {
            data,
            pos: 0,
            endian,
        }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }
    pub fn endian(&self) -> Endian {
        self.endian
    }
    #[inline]
    fn err(&self, what: &'static str) -> ParseError {
        ParseError {
            what,
            pos: self.pos,
        }
    }
    #[inline]
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ParseError> {
        if n > self.remaining() {
            return Err(self.err(what));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    #[inline]
    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], ParseError> {
        let b = self.bytes(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }
    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8, ParseError> {
        Ok(self.array::<1>(what)?[0])
    }
    #[inline]
    pub fn u16(&mut self, what: &'static str) -> Result<u16, ParseError> {
        Ok(self.endian.u16(self.array(what)?))
    }
    #[inline]
    pub fn u32(&mut self, what: &'static str) -> Result<u32, ParseError> {
        Ok(self.endian.u32(self.array(what)?))
    }
    #[inline]
    pub fn u64(&mut self, what: &'static str) -> Result<u64, ParseError> {
        Ok(self.endian.u64(self.array(what)?))
    }
    /// Reads `n` u64 values as a borrowed, endian-aware view (validated length).
    pub fn u64_array(&mut self, n: u64, what: &'static str) -> Result<U64Array<'a>, ParseError> {
        let len = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(8))
            .ok_or_else(|| self.err(what))?;
        let bytes = self.bytes(len, what)?;
        Ok(U64Array {
            bytes,
            endian: self.endian,
        })
    }
    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<(), ParseError> {
        self.bytes(n, what).map(|_| ())
    }
    /// A NUL-terminated string within the next `n` bytes (or the rest when
    /// `n` is None); the cursor moves past all `n` bytes.
    pub fn cstr_in(
        &mut self,
        n: Option<usize>,
        what: &'static str,
    ) -> Result<&'a [u8], ParseError> {
        let n = n.unwrap_or(self.remaining());
        let b = self.bytes(n, what)?;
        Ok(until_nul(b))
    }
}

/// The bytes before the first NUL (or all bytes if there is none).
pub fn until_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// A borrowed array of u64 in the file's byte order.
#[derive(Clone, Copy)]
pub struct U64Array<'a> {
    bytes: &'a [u8],
    endian: Endian,
}

impl<'a> U64Array<'a> {
    pub fn empty() -> Self {
        U64Array {
            bytes: &[],
            endian: Endian::Little,
        }
    }
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<u64> {
        let b = self.bytes.get(i * 8..i * 8 + 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Some(self.endian.u64(a))
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u64> + ExactSizeIterator + 'a {
        let endian = self.endian;
        self.bytes.chunks_exact(8).map(move |c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            endian.u64(a)
        })
    }
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl std::fmt::Debug for U64Array<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

//! Size limits (spec §7), enforced while a bundle is read, never trusted from headers.

/// Limits on one bundle. The defaults are the spec's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Compressed size of the whole file.
    pub compressed: u64,
    /// Uncompressed size of all members together.
    pub uncompressed: u64,
    /// One artifact.
    pub artifact: u64,
    /// Number of members.
    pub members: u64,
    /// The manifest (the envelope's decoded payload).
    pub manifest: u64,
}

/// How far a bundle's `created_at` may be ahead of the verifier's clock (spec §6a): the
/// clocks of the machine that packed it and of the one that checks it may differ.
pub const CLOCK_TOLERANCE_S: i64 = 600;

const MIB: u64 = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            compressed: 256 * MIB,
            uncompressed: 1024 * MIB,
            artifact: 64 * MIB,
            members: 100_000,
            manifest: 4 * MIB,
        }
    }
}

impl Limits {
    /// The envelope holds the manifest in base64 (4/3 larger) plus signatures.
    pub fn envelope(&self) -> u64 {
        self.manifest.div_ceil(3) * 4 + 64 * 1024
    }
}

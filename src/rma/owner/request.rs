//! The request header that origins write into queue slots and the agent decodes. It is
//! encoded field by field into plain bytes, never viewed in place as a struct: a slot is
//! shared memory that another process wrote, so the agent decodes whatever it finds and
//! validates it before acting on it (`agent`).

pub(super) const INLINE_ACC: u32 = 0;
pub(super) const STAGED_ACC: u32 = 1;
pub(super) const STAGED_GET_ACC: u32 = 2;

/// A request's header.
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    pub(super) kind: u32,
    pub(super) origin: u32,
    pub(super) at: u64,
    pub(super) count: u32,
    pub(super) half: u32,
    pub(super) op: u32,
    /// The element type, as its [`ElemKind`](crate::protocol::atomic::op::ElemKind) code.
    pub(super) elem: u32,
    pub(super) alpha: f64,
}

impl Req {
    pub(super) fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.kind.to_le_bytes());
        out[4..8].copy_from_slice(&self.origin.to_le_bytes());
        out[8..16].copy_from_slice(&self.at.to_le_bytes());
        out[16..20].copy_from_slice(&self.count.to_le_bytes());
        out[20..24].copy_from_slice(&self.half.to_le_bytes());
        out[24..28].copy_from_slice(&self.op.to_le_bytes());
        out[28..32].copy_from_slice(&self.elem.to_le_bytes());
        out[32..40].copy_from_slice(&self.alpha.to_le_bytes());
    }

    pub(super) fn decode(b: &[u8]) -> Req {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Req {
            kind: u32_at(0),
            origin: u32_at(4),
            at: u64_at(8),
            count: u32_at(16),
            half: u32_at(20),
            op: u32_at(24),
            elem: u32_at(28),
            alpha: f64::from_bits(u64_at(32)),
        }
    }
}

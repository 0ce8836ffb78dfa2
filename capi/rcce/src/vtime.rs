//! RCCE in virtual time (`rccerun -clock GHz`, `sccrun --timing scc`): what each call
//! costs on the emulated chip, and how a flag carries its writer's time.
//!
//! Every API call is one operation of the core's clock ([`call`], from `with_rcce`),
//! charged the chip's software cost of a call. Inside it:
//! - a flag write costs one MPB line to the flag's core (plus the test-and-set for a
//!   single-bit flag) and stamps the flag's byte with the writer's time, before the
//!   store that publishes it ([`flag_written`]);
//! - a flag wait ends at the later of the waiter's own time and the flag's stamp, plus
//!   the MPB read that sees it ([`flag_seen`]): the wait is the jump;
//! - a copy between private memory and an MPB costs, per 32-byte line, the MPB line at
//!   the MPB's distance plus the private line (an L1 hit while the message fits the
//!   L1, a DRAM access beyond) ([`copied`]);
//! - a test-and-set costs the register access at its tile ([`test_and_set`]).
//!
//! So RCCE's send, receive, barrier and collectives, built of these, take the time of
//! their handshakes on the chip. Across nodes the same charges apply, and sccemu adds
//! the chip's link to what crosses (`core::remote_mpb`): a flag's stamp arrives a link
//! later, a get from another node waits for the link both ways, and a read of another
//! node's flag sees its stamp a link later ([`remote_flag_seen`]). Off virtual time each
//! of these is one branch.

use sccemu::timing::{self, Category, Op};

/// The category of RCCE call `what`, for the trace.
fn category(what: &str) -> Category {
    let name = what.trim_start_matches("RCCE_");
    match name {
        n if n.starts_with("send") => Category::Send,
        n if n.starts_with("recv") => Category::Recv,
        n if n.starts_with("put") => Category::Put,
        n if n.starts_with("get") => Category::Get,
        "flag_write" | "flag_read" => Category::Flag,
        "wait_until" => Category::FlagWait,
        "acquire_lock" | "release_lock" => Category::Lock,
        "barrier" => Category::Sync,
        _ => Category::Collective,
    }
}

/// Starts the operation of API call `what`, charged one call's software cost.
pub fn call(what: &'static str) -> Option<Op<'static>> {
    timing::call(category(what), what)
}

/// A flag write to rank `owner`'s MPB byte `byte` (through its test-and-set register
/// if `bits`): charges it and, if `stamp`, stamps the byte. Call before the store.
/// Across nodes the stamps are in each node's segment: a flag of a UE on another node
/// is stamped there instead (`Core::stamp_mpb`, with the chip's link).
pub fn flag_written(owner: u32, byte: usize, bits: bool, stamp: bool) {
    let Some(op) = timing::begin(Category::Flag, "flag write") else { return };
    let c = op.clock();
    op.charge(c.mpb_line_ps(owner) + if bits { c.test_and_set_ps(owner) } else { 0 });
    if stamp {
        op.stamp(c.mpb_stamp(owner, byte));
    }
}

/// A flag of rank `owner`'s MPB byte `byte` seen with the value waited for (after the
/// load that saw it).
pub fn flag_seen(owner: u32, byte: usize) {
    let Some(op) = timing::begin(Category::FlagWait, "flag wait") else { return };
    let c = op.clock();
    op.observe_word(c.mpb_stamp(owner, byte), c.mpb_line_ps(owner));
}

/// A flag of rank `owner`, on another node, read by a round trip (charged by the read)
/// whose value was written at `stamp` there: the answer cannot leave before then, and
/// takes the link back.
pub fn remote_flag_seen(owner: u32, stamp: u64) {
    let Some(op) = timing::begin(Category::FlagWait, "flag read") else { return };
    let c = op.clock();
    op.observe(stamp.saturating_add(c.chip().link_ps(0)), c.mpb_line_ps(owner));
}

/// `bytes` copied between a private buffer of `private_bytes` and rank `owner`'s MPB.
pub fn copied(owner: u32, bytes: usize, private_bytes: usize) {
    let Some(op) = timing::begin(Category::Put, "mpb copy") else { return };
    let c = op.clock();
    op.charge(c.lines(bytes) * (c.mpb_line_ps(owner) + c.private_line_ps(private_bytes)));
}

/// A test-and-set of rank `owner`'s register.
pub fn test_and_set(owner: u32) {
    let Some(op) = timing::begin(Category::Lock, "test-and-set") else { return };
    op.charge(op.clock().test_and_set_ps(owner));
}

/// The operation of one message from `src` to `dst` (inside the send or receive
/// call), marked as the start (`sending`) or end of its flow arrow in the trace. Both
/// sides number a pair's messages alike: RCCE's messages between two UEs are ordered.
pub fn message(src: u32, dst: u32, sending: bool) -> Option<Op<'static>> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static SEQ: Mutex<Option<HashMap<(u32, u32), u64>>> = Mutex::new(None);
    let mut op = timing::begin(if sending { Category::Send } else { Category::Recv }, "message")?;
    let mut seq = SEQ.lock().unwrap_or_else(|e| e.into_inner());
    let n = seq.get_or_insert_with(HashMap::new).entry((src, dst)).or_insert(0);
    *n += 1;
    op.flow(u64::from(src) << 44 | u64::from(dst) << 24 | (*n & 0xff_ffff), sending);
    Some(op)
}

/// Tile `tile` now runs at `1600 / divider` MHz (RCCE's power API).
pub fn set_divider(tile: u32, divider: u32) {
    if let Some(c) = timing::clock() {
        c.set_divider(tile as usize, divider);
    }
}

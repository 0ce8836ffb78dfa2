//! The small-message path of blocking receives (`p2p::progress::small`) against the
//! general path's rules: whole messages at the front of the channel may go straight
//! into a receive only when nothing queued or posted comes first.

use sccemu::{ANY_SOURCE, ANY_TAG, ChannelKind, Core, Job, RecvError};

const BOTH: [ChannelKind; 2] = [ChannelKind::PerPeer, ChannelKind::Srb];

fn e(x: impl std::fmt::Display) -> String {
    x.to_string()
}

fn recv_one(core: &Core, src: impl Into<sccemu::Source>, tag: u32) -> Result<u8, String> {
    let mut b = [0u8; 8];
    let s = core.recv(src, tag, &mut b).map_err(e)?;
    if s.len != 1 {
        return Err(format!("{s:?}"));
    }
    Ok(b[0])
}

/// Rank 1 sends tags 1, 1, 2 (the perpeer slot holds one at a time, so rank 0 takes
/// them while rank 1 sends), then tag 1 again once rank 0 has queued the first two:
/// the arrived tag-1 messages come before the one at the channel's front. A posted
/// receive that matches gets the next message before a later blocking receive does,
/// and a receive too small for a message leaves it queued.
fn order(core: &Core, _: ()) -> Result<Vec<u8>, String> {
    if core.rank() == 1 {
        for (tag, v) in [(1, 0u8), (1, 1), (2, 9)] {
            core.send(0, tag, &[v]).map_err(e)?;
        }
        core.barrier().map_err(e)?;
        core.send(0, 1, &[3]).map_err(e)?;
        core.barrier().map_err(e)?;
        for v in [4u8, 5] {
            core.send(0, 1, &[v]).map_err(e)?;
        }
        core.barrier().map_err(e)?;
        core.send(0, 3, &[6; 8]).map_err(e)?;
        return Ok(vec![]);
    }
    let mut got = vec![recv_one(core, 1, 2)?];
    core.barrier().map_err(e)?;
    core.barrier().map_err(e)?;
    for _ in 0..3 {
        got.push(recv_one(core, ANY_SOURCE, 1)?);
    }
    let mut posted = [0u8; 1];
    let request = core.irecv(ANY_SOURCE, ANY_TAG, &mut posted).map_err(e)?;
    core.barrier().map_err(e)?;
    got.push(recv_one(core, 1, 1)?);
    request.wait().map_err(e)?;
    got.push(posted[0]);
    let mut short = [0u8; 4];
    match core.recv(1, 3, &mut short) {
        Err(RecvError::Truncated { status, capacity: 4 }) if status.len == 8 => {}
        other => return Err(format!("expected a truncation, got {other:?}")),
    }
    let mut whole = [0u8; 8];
    core.recv(1, 3, &mut whole).map_err(e)?;
    got.push(whole[7]);
    Ok(got)
}

#[test]
fn small_receives_keep_matching_order() {
    for kind in BOTH {
        let got = Job::new(2).channel(kind).run(&(), order).unwrap();
        assert_eq!(got[0], vec![9, 0, 1, 3, 5, 4, 6], "{kind:?}");
    }
}

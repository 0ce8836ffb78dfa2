//! Random message scripts over real processes, both protocols: every message arrives
//! exactly once, intact, and in order per (source, tag), whether sent blocking, in the
//! background, or synchronously in the background (whose requests complete only once
//! receives matched them, after every receive here).

use proptest::prelude::*;
use sccemu::{ANY_SOURCE, ANY_TAG, ChannelKind, Core, Job};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Msg {
    src: u32,
    dst: u32,
    tag: u32,
    len: usize,
    /// How it is sent.
    mode: SendMode,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum SendMode {
    Blocking,
    /// `isend`, completed by `wait_all` at the end.
    Background,
    /// `issend`, completed by `wait_all` at the end.
    Synchronous,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Script {
    msgs: Vec<Msg>,
    /// Per receiver: receive from sources below this rank by (source, tag) first,
    /// the rest with any-source, any-tag receives.
    specific_below: Vec<u32>,
}

fn pattern(m: &Msg, seq: usize) -> Vec<u8> {
    let seed =
        m.src.wrapping_mul(73) ^ m.dst.wrapping_mul(151) ^ m.tag.wrapping_mul(1009) ^ (seq as u32) << 8;
    (0..m.len).map(|i| (i as u32).wrapping_mul(2654435761).wrapping_add(seed).to_be_bytes()[0]).collect()
}

/// Messages from `src` to `dst` with `tag`, in send order.
fn stream(s: &Script, src: u32, dst: u32, tag: u32) -> impl Iterator<Item = &Msg> {
    s.msgs.iter().filter(move |m| m.src == src && m.dst == dst && m.tag == tag)
}

fn run_script(core: &Core, s: Script) -> Result<usize, String> {
    let me = core.rank();
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut seqs = std::collections::HashMap::new();
    let mut sends = Vec::new();
    let out: Vec<(&Msg, Vec<u8>)> = s
        .msgs
        .iter()
        .filter(|m| m.src == me)
        .map(|m| {
            let seq = seqs.entry((m.dst, m.tag)).or_insert(0usize);
            *seq += 1;
            (m, pattern(m, *seq - 1))
        })
        .collect();
    for (m, data) in &out {
        match m.mode {
            SendMode::Blocking => core.send(m.dst, m.tag, data).map_err(|x| e(&x))?,
            SendMode::Background => sends.push(core.isend(m.dst, m.tag, data).map_err(|x| e(&x))?),
            SendMode::Synchronous => sends.push(core.issend(m.dst, m.tag, data).map_err(|x| e(&x))?),
        }
    }
    // Receive: expected next sequence number per (source, tag).
    let mut next = std::collections::HashMap::<(u32, u32), usize>::new();
    let mut check = |src: u32, tag: u32, data: &[u8]| -> Result<(), String> {
        let seq = next.entry((src, tag)).or_insert(0);
        let m = stream(&s, src, me, tag).nth(*seq).ok_or(format!("extra message from {src} tag {tag}"))?;
        if data != pattern(m, *seq).as_slice() {
            return Err(format!(
                "message {seq} from {src} tag {tag} ({} bytes) damaged or out of order",
                m.len
            ));
        }
        *seq += 1;
        Ok(())
    };
    let incoming: Vec<&Msg> = s.msgs.iter().filter(|m| m.dst == me).collect();
    let below = s.specific_below[me as usize];
    let mut received = 0;
    for src in 0..below {
        for tag in 0..3 {
            for m in stream(&s, src, me, tag) {
                let mut buf = vec![0u8; m.len];
                let st = core.recv(src, tag, &mut buf).map_err(|x| e(&x))?;
                if (st.source, st.tag, st.len) != (src, tag, m.len) {
                    return Err(format!("status {st:?} for {m:?}"));
                }
                check(src, tag, &buf)?;
                received += 1;
            }
        }
    }
    for _ in incoming.iter().filter(|m| m.src >= below) {
        let (data, st) = core.recv_vec(ANY_SOURCE, ANY_TAG).map_err(|x| e(&x))?;
        if st.source < below {
            return Err(format!("any-source receive got a message from {} already drained", st.source));
        }
        check(st.source, st.tag, &data)?;
        received += 1;
    }
    core.wait_all(sends).map_err(|x| e(&x))?;
    if core.iprobe(ANY_SOURCE, ANY_TAG).map_err(|x| e(&x))?.is_some() {
        return Err("a message too many".into());
    }
    core.barrier().map_err(|x| e(&x))?;
    Ok(received)
}

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => Just(0usize),
        8 => 1usize..64,
        6 => 64usize..5000,
        3 => 5000usize..200_000,
        1 => Just(1usize << 20),
    ]
}

fn script(max_cores: u32) -> impl Strategy<Value = (u32, Script)> {
    (2..=max_cores).prop_flat_map(|n| {
        let mode =
            prop_oneof![Just(SendMode::Blocking), Just(SendMode::Background), Just(SendMode::Synchronous)];
        let msg = (0..n, 0..n, 0u32..3, size(), mode).prop_map(|(src, dst, tag, len, mode)| Msg {
            src,
            dst,
            tag,
            len,
            mode,
        });
        (Just(n), prop::collection::vec(msg, 1..40), prop::collection::vec(0..=n, n as usize))
            .prop_map(|(n, msgs, specific_below)| (n, Script { msgs, specific_below }))
    })
}

fn expected(s: &Script, n: u32) -> Vec<usize> {
    (0..n).map(|r| s.msgs.iter().filter(|m| m.dst == r).count()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 8,
        failure_persistence: None,
        max_shrink_iters: 20,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_scripts_both_protocols((n, s) in script(8), srb in any::<bool>()) {
        let kind = if srb { ChannelKind::Srb } else { ChannelKind::PerPeer };
        let got = Job::new(n).channel(kind).run(&s, run_script).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got, expected(&s, n));
    }
}

/// 48 oversubscribed cores: everyone sends to a few others, small and medium sizes.
#[test]
fn oversubscribed_48_cores_both_protocols() {
    let n = 48u32;
    let mut msgs = Vec::new();
    for src in 0..n {
        for k in 1..=3u32 {
            let dst = (src * 7 + k * 13) % n;
            let len = [0, 20, 3000, 40_000][((src + k) % 4) as usize];
            let mode = [SendMode::Blocking, SendMode::Background, SendMode::Synchronous][k as usize - 1];
            msgs.push(Msg { src, dst, tag: k % 2, len, mode });
        }
    }
    let s = Script { msgs, specific_below: (0..n).map(|r| r % 3 * 16).collect() };
    for kind in [ChannelKind::PerPeer, ChannelKind::Srb] {
        assert_eq!(Job::new(n).channel(kind).run(&s, run_script).unwrap(), expected(&s, n), "{kind:?}");
    }
}

use super::*;
use proptest::prelude::*;

/// Every invariant the crate documents, checked for one config.
fn check_invariants(config: &Config) {
    let layout = layout(config).expect("valid config");
    let regions = layout.regions();
    for (name, r) in regions {
        assert_eq!(r.offset % LINE, 0, "{name} starts at {} off a line", r.offset);
    }
    for pair in regions.windows(2) {
        let ((a, ra), (b, rb)) = (pair[0], pair[1]);
        assert!(ra.end() <= rb.offset, "{a} {ra:?} overlaps {b} {rb:?}");
    }
    let (_, last) = regions[regions.len() - 1];
    assert_eq!(layout.total, last.end(), "total is the end of the last region");
    assert_eq!((layout.heap.offset % PAGE, layout.heap.len % PAGE), (0, 0), "the heap is whole pages");
    assert!(layout.header.len >= size_of::<Header>());
    for per_core in [layout.slots, layout.checks, layout.orphans, layout.mpbs, layout.rings] {
        assert_eq!(per_core.count, config.cores as usize);
        assert_eq!(per_core.stride % LINE, 0, "stride {} shares lines between cores", per_core.stride);
        assert!(per_core.stride >= per_core.elem_len);
        for rank in 0..per_core.count {
            let own = per_core.get(rank).unwrap();
            assert_eq!(own.offset % LINE, 0);
            if let Some(next) = per_core.get(rank + 1) {
                // The last line this core touches and the first of the next core differ.
                assert!(
                    (own.end() - 1) / LINE < next.offset / LINE,
                    "cores {rank} and {} share a line",
                    rank + 1
                );
            }
        }
        assert!(per_core.get(per_core.count).is_none());
    }
    assert_eq!(layout.slots.elem_len, SLOT_BYTES);
    assert_eq!(layout.checks.elem_len, CHECK_BYTES);
    assert_eq!(layout.orphans.elem_len, ORPHAN_BYTES);
    assert_eq!(layout.mpbs.elem_len, config.mpb_bytes as usize);
    assert_eq!(layout.rings.elem_len, config.ring_bytes as usize);
    let channel = if config.spans_nodes() { REQUEST_CHANNEL_BYTES } else { 0 };
    assert_eq!(layout.requests.len, channel);
    assert!(REQUEST_RING_BYTES.is_power_of_two() && REQUEST_COUNTER_BYTES % LINE == 0);
    assert_eq!(layout.heap.len as u64, config.heap_bytes.next_multiple_of(PAGE as u64));
}

#[test]
fn scc_defaults_lay_out() {
    let config = Config::new(48);
    assert_eq!(config.mesh, Mesh::SCC);
    assert_eq!(config.mpb_bytes, 8192);
    check_invariants(&config);
}

#[test]
fn header_is_line_aligned_and_job_words_have_their_own_line() {
    assert_eq!(align_of::<Header>(), LINE);
    assert_eq!(core::mem::offset_of!(Header, job) % LINE, 0);
    assert_eq!(size_of::<JobWords>(), LINE);
}

#[test]
fn larger_jobs_grow_the_mesh_by_rows() {
    assert_eq!(Mesh::for_cores(1), Mesh::SCC);
    assert_eq!(Mesh::for_cores(49), Mesh { rows: 5, ..Mesh::SCC });
    assert!(Mesh::for_cores(MAX_CORES).capacity() >= u64::from(MAX_CORES));
}

#[test]
fn bad_configs_are_refused() {
    let ok = Config::new(4);
    assert!(matches!(layout(&Config { cores: 0, ..ok }), Err(ConfigError::Cores { .. })));
    assert!(matches!(layout(&Config { cores: MAX_CORES + 1, ..ok }), Err(ConfigError::Cores { .. })));
    let tiny = Mesh { cols: 1, rows: 1, cores_per_tile: 2 };
    assert!(matches!(layout(&Config { mesh: tiny, ..ok }), Err(ConfigError::MeshTooSmall { .. })));
    assert!(matches!(layout(&Config { mpb_bytes: 100, ..ok }), Err(ConfigError::MpbBytes(100))));
    assert!(matches!(layout(&Config { ring_bytes: 3000, ..ok }), Err(ConfigError::RingBytes(3000))));
    assert!(matches!(layout(&Config { wait: 9, ..ok }), Err(ConfigError::UnknownPolicy)));
}

#[test]
fn a_node_runs_a_block_of_a_larger_job() {
    let job =
        |cores, node_first, node_cores| layout(&Config { node_first, node_cores, ..Config::new(cores) });
    let two_nodes = Config { node_first: 4096, node_cores: 4096, ..Config::new(8192) };
    assert!(two_nodes.spans_nodes() && two_nodes.is_local(8191) && !two_nodes.is_local(4095));
    assert!(job(8192, 4096, 4096).is_ok());
    check_invariants(&two_nodes);
    assert_eq!(layout(&two_nodes).unwrap().requests.len, REQUEST_CHANNEL_BYTES);
    // Nodes of one job that run different counts of ranks place everything alike.
    let (a, b) = (job(8000, 0, 4000).unwrap(), job(8000, 4000, 3000).unwrap());
    assert_eq!((a.heap, a.mpbs, a.timing, a.requests), (b.heap, b.mpbs, b.timing, b.requests));
    assert!(job(MAX_JOB_CORES, 0, MAX_CORES).is_ok());
    assert!(matches!(job(MAX_JOB_CORES + 1, 0, 1), Err(ConfigError::Cores { .. })));
    assert!(matches!(job(8192, 0, MAX_CORES + 1), Err(ConfigError::Cores { .. })));
    assert!(matches!(job(8192, 8000, 193), Err(ConfigError::NodeBlock { .. })));
    let whole = Config::new(8);
    assert!(!whole.spans_nodes() && whole.is_local(7) && !whole.is_local(8));
}

#[test]
fn mesh_parses_and_prints() {
    assert_eq!("6x4x2".parse::<Mesh>(), Ok(Mesh::SCC));
    assert_eq!(Mesh::SCC.to_string(), "6x4x2");
    for bad in ["", "6x4", "6x4x2x1", "0x4x2", "ax4x2"] {
        assert!(bad.parse::<Mesh>().is_err(), "{bad:?} parsed");
    }
}

fn any_config() -> impl Strategy<Value = Config> {
    (1u32..=MAX_CORES, 8u32..=256, 10u32..=20, 0u64..=(1 << 30), 0u32..3, 0u32..2).prop_map(
        |(cores, mpb_lines, ring_log2, heap_bytes, wait, channel)| Config {
            mpb_bytes: mpb_lines * 64,
            ring_bytes: 1 << ring_log2,
            heap_bytes,
            wait,
            channel,
            ..Config::new(cores)
        },
    )
}

proptest! {
    #[test]
    fn random_configs_keep_every_invariant(config in any_config()) {
        check_invariants(&config);
    }

    #[test]
    fn layout_is_a_pure_function(config in any_config()) {
        prop_assert_eq!(layout(&config), layout(&config));
    }
}

#[test]
fn channel_kinds_parse_and_print() {
    for kind in [ChannelKind::PerPeer, ChannelKind::Srb] {
        assert_eq!(kind.to_string().parse::<ChannelKind>(), Ok(kind));
    }
    assert_eq!(" SRB ".parse::<ChannelKind>(), Ok(ChannelKind::Srb));
    assert!("mpich".parse::<ChannelKind>().is_err());
}

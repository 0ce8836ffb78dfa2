//! A SimGrid platform for SMPI generated from sccemu's chip description
//! ([`sccemu::timing::Chip`]), written from SimGrid's documented XML format (platform
//! version 4.1): one host per core, one router per tile, a link from each core to its
//! tile's router and a link between neighbouring routers, XY routes, and a `<config>`
//! block with the SMPI settings that carry the rest of the model.
//!
//! What each figure is derived from (every one from the chip's own parameters):
//!
//! - host speed: the core clock, `base_mhz / divider`, one flop a cycle;
//! - `smpi/host-speed`: the host's speed as SMPI should assume it when it scales a
//!   rank's measured CPU time, `core speed x compute.host_to_target`, so that one host
//!   second costs `host_to_target` virtual seconds, as in sccemu's `cpu-time` compute
//!   (`compute.source = "none"` turns SMPI's compute off instead);
//! - core link: latency, one MPB line access (`mpb_line_ps` at zero hops); bandwidth, one
//!   line per the cost sccemu charges to move a line from a sender's private buffer
//!   through the MPB into the receiver's (two private-line and two MPB accesses, L1
//!   hits), since RCCE's copies in and out are sequential;
//! - `smpi/bw-factor`: from `cache.l1_bytes` on, the ratio of that per-line cost with L1
//!   hits to the one with misses (sccemu's private-memory costs change there);
//! - mesh link: latency, `hop_mesh_cycles` at the mesh clock (one hop, one way);
//!   bandwidth, one line per that time;
//! - `smpi/os`, `smpi/ois`: `ops.call_core_cycles` as the software cost of a send
//!   (`smpi/or` zero, see `config`); `smpi/lat-factor` 1 and no cross-traffic, since
//!   SMPI's defaults are calibrated for Ethernet clusters.
//!
//! Up to [`EXACT_ROUTES_MAX`] cores every route is listed (`routing="Full"`) and
//! follows the chip's XY routing over split-duplex links. Beyond that the full table
//! would grow with the square of the cores, and letting SimGrid compute shortest paths
//! over the mesh (`routing="Dijkstra"`) took 161 s for a 4096-rank hello here. So large
//! jobs get a SimGrid cluster instead: each core's link as above, and the mesh replaced
//! by a non-blocking backbone whose latency is the mean XY distance between two cores'
//! tiles. Such a platform keeps the costs of a message but not where it crosses the
//! mesh: fine for launch and scale, not for contention.

use std::fmt::Write as _;

use sccemu::timing::Chip;
use sccemu::timing::chip::ComputeSource;

/// Largest job whose routes are all listed, exactly XY.
pub const EXACT_ROUTES_MAX: u32 = 128;

/// The platform file and host file for one job.
#[derive(Clone, Debug)]
pub struct Platform {
    /// The SimGrid platform, XML.
    pub xml: String,
    /// One host name per line, rank order: rank r runs on core r.
    pub hosts: String,
    /// The mesh the cores were laid on (the chip's, grown by rows like sccemu's).
    pub cols: u32,
    pub rows: u32,
}

/// The costs the platform carries, in seconds and bytes per second.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    pub core_hz: f64,
    pub host_speed_hz: Option<f64>,
    pub core_link_latency_s: f64,
    pub core_link_bandwidth: f64,
    pub mesh_link_latency_s: f64,
    pub mesh_link_bandwidth: f64,
    /// Messages from this size on get `bw_factor_large`.
    pub l1_bytes: u32,
    pub bw_factor_large: f64,
    pub call_s: f64,
}

fn s(ps: u64) -> f64 {
    ps as f64 / 1e12
}

impl Derived {
    /// The figures of the module docs, for `chip`.
    pub fn of(chip: &Chip) -> Derived {
        let d = chip.clocks.divider;
        let core_hz = chip.clocks.base_mhz * 1e6 / f64::from(d);
        let tile = chip.tile_of(0);
        let line = f64::from(chip.mpb.line_bytes);
        let mpb = chip.mpb_line_ps(tile, tile, d);
        let small = chip.private_line_ps(tile, 0, d);
        let large = chip.private_line_ps(tile, chip.cache.l1_bytes as usize, d);
        let per_line_hit = 2 * small + 2 * mpb;
        let per_line_miss = 2 * large + 2 * mpb;
        let hop = chip.mesh_ps(u64::from(chip.mpb.hop_mesh_cycles));
        Derived {
            core_hz,
            host_speed_hz: match chip.compute.source {
                ComputeSource::None => None,
                // Instructions are counted, not timed, in sccemu; SMPI can only time.
                ComputeSource::CpuTime | ComputeSource::Instructions => {
                    Some(core_hz * chip.compute.host_to_target)
                }
            },
            core_link_latency_s: s(mpb),
            core_link_bandwidth: line / s(per_line_hit),
            mesh_link_latency_s: s(hop),
            mesh_link_bandwidth: line / s(hop.max(1)),
            l1_bytes: chip.cache.l1_bytes,
            bw_factor_large: per_line_hit as f64 / per_line_miss as f64,
            call_s: s(chip.core_ps(u64::from(chip.ops.call_core_cycles), d)),
        }
    }
}

/// SimGrid's unit syntax for a rate or a time, in plain SI units.
fn bps(v: f64) -> String {
    format!("{v:.6e}Bps")
}
fn secs(v: f64) -> String {
    format!("{v:.6e}s")
}

fn router(x: u32, y: u32) -> String {
    format!("r{x}-{y}")
}

/// The link between (x, y) and its neighbour in +x (`h`) or +y (`v`).
fn mesh_link(kind: char, x: u32, y: u32) -> String {
    format!("{kind}{x}-{y}")
}

/// The mesh links of the XY route from tile `a` to tile `b`, each with the direction
/// it is crossed in: `UP` from lower to higher coordinates.
fn xy_route(a: [u32; 2], b: [u32; 2]) -> Vec<(String, &'static str)> {
    let mut links = Vec::new();
    let [mut x, y0] = a;
    while x != b[0] {
        if x < b[0] {
            links.push((mesh_link('h', x, y0), "UP"));
            x += 1;
        } else {
            links.push((mesh_link('h', x - 1, y0), "DOWN"));
            x -= 1;
        }
    }
    let mut y = y0;
    while y != b[1] {
        if y < b[1] {
            links.push((mesh_link('v', x, y), "UP"));
            y += 1;
        } else {
            links.push((mesh_link('v', x, y - 1), "DOWN"));
            y -= 1;
        }
    }
    links
}

/// The platform for `cores` ranks on `chip`.
pub fn generate(chip: &Chip, cores: u32) -> Platform {
    let mut chip = chip.clone();
    let per_row = chip.mesh.cols * chip.mesh.cores_per_tile;
    // Past the chip's cores, the mesh grows by rows, as sccemu's does.
    chip.mesh.rows = chip.mesh.rows.max(cores.div_ceil(per_row));
    let (cols, rows) = (chip.mesh.cols, chip.mesh.rows);
    let costs = Derived::of(&chip);

    let mut xml = String::new();
    let _ = writeln!(xml, "<?xml version='1.0'?>");
    let _ = writeln!(xml, "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">");
    let _ = writeln!(
        xml,
        "<!-- Generated by `sccrun smpi-platform -n {cores}` from sccemu's chip description: \
         {cols}x{rows} tiles, {} cores a tile, cores at {:.3} MHz. -->",
        chip.mesh.cores_per_tile,
        costs.core_hz / 1e6
    );
    let _ = writeln!(xml, "<platform version=\"4.1\">");
    config(&mut xml, &costs);
    if cores <= EXACT_ROUTES_MAX {
        mesh_zone(&mut xml, &chip, &costs, cores);
    } else {
        cluster(&mut xml, &chip, &costs, cores);
    }
    let _ = writeln!(xml, "</platform>");
    let hosts = (0..cores).map(|c| format!("core{c}\n")).collect();
    Platform { xml, hosts, cols, rows }
}

/// The mesh itself: hosts, routers, links and every XY route.
fn mesh_zone(xml: &mut String, chip: &Chip, costs: &Derived, cores: u32) {
    let (cols, rows) = (chip.mesh.cols, chip.mesh.rows);
    let sharing = " sharing_policy=\"SPLITDUPLEX\"";
    let _ = writeln!(xml, "<zone id=\"scc\" routing=\"Full\">");
    let speed = format!("{:.6e}f", costs.core_hz);
    for core in 0..cores {
        let _ = writeln!(xml, "  <host id=\"core{core}\" speed=\"{speed}\"/>");
    }
    for tile in 0..cols * rows {
        let _ = writeln!(xml, "  <router id=\"{}\"/>", router(tile % cols, tile / cols));
    }
    let (core_bw, core_lat) = (bps(costs.core_link_bandwidth), secs(costs.core_link_latency_s));
    for core in 0..cores {
        let _ =
            writeln!(xml, "  <link id=\"c{core}\" bandwidth=\"{core_bw}\" latency=\"{core_lat}\"{sharing}/>");
    }
    let (mesh_bw, mesh_lat) = (bps(costs.mesh_link_bandwidth), secs(costs.mesh_link_latency_s));
    for y in 0..rows {
        for x in 0..cols {
            let mut link = |id: String| {
                let _ = writeln!(
                    xml,
                    "  <link id=\"{id}\" bandwidth=\"{mesh_bw}\" latency=\"{mesh_lat}\"{sharing}/>"
                );
            };
            if x + 1 < cols {
                link(mesh_link('h', x, y));
            }
            if y + 1 < rows {
                link(mesh_link('v', x, y));
            }
        }
    }
    for a in 0..cores {
        for b in (0..cores).filter(|&b| b != a) {
            let _ = write!(xml, "  <route src=\"core{a}\" dst=\"core{b}\" symmetrical=\"NO\">");
            let _ = write!(xml, "<link_ctn id=\"c{a}\" direction=\"UP\"/>");
            for (link, direction) in xy_route(chip.tile_of(a), chip.tile_of(b)) {
                let _ = write!(xml, "<link_ctn id=\"{link}\" direction=\"{direction}\"/>");
            }
            let _ = writeln!(xml, "<link_ctn id=\"c{b}\" direction=\"DOWN\"/></route>");
        }
    }
    let _ = writeln!(xml, "</zone>");
}

/// A cluster for large jobs (module docs): the mesh as a backbone of mean XY latency.
fn cluster(xml: &mut String, chip: &Chip, costs: &Derived, cores: u32) {
    // The mean distance between the tiles of two distinct cores, counted tile by tile
    // (a core per tile position weighs its tile's cores).
    let tiles: Vec<[u32; 2]> = (0..cores).map(|c| chip.tile_of(c)).collect();
    let (cols, rows) = (chip.mesh.cols as usize, chip.mesh.rows as usize);
    let mut per_col = vec![0u64; cols];
    let mut per_row = vec![0u64; rows];
    for t in &tiles {
        per_col[t[0] as usize] += 1;
        per_row[t[1] as usize] += 1;
    }
    // Sum over ordered pairs of |dx| + |dy| splits into the two axes.
    let axis = |counts: &[u64]| -> f64 {
        let mut sum = 0.0;
        for (i, a) in counts.iter().enumerate() {
            for (j, b) in counts.iter().enumerate() {
                sum += (a * b) as f64 * i.abs_diff(j) as f64;
            }
        }
        sum
    };
    let pairs = f64::from(cores) * f64::from(cores.saturating_sub(1)).max(1.0);
    let mean_hops = (axis(&per_col) + axis(&per_row)) / pairs;
    let _ = writeln!(
        xml,
        "<!-- {cores} cores: a cluster; the mesh is a backbone with the mean XY distance, \
         {mean_hops:.2} hops. -->"
    );
    let _ = writeln!(
        xml,
        "<cluster id=\"scc\" prefix=\"core\" suffix=\"\" radical=\"0-{}\" speed=\"{:.6e}f\" \
         bw=\"{}\" lat=\"{}\" sharing_policy=\"SPLITDUPLEX\" bb_bw=\"{}\" \
         bb_lat=\"{}\" bb_sharing_policy=\"FATPIPE\"/>",
        cores - 1,
        costs.core_hz,
        bps(costs.core_link_bandwidth),
        secs(costs.core_link_latency_s),
        bps(costs.mesh_link_bandwidth),
        secs(mean_hops * costs.mesh_link_latency_s),
    );
}

/// SMPI's settings: the software costs, compute scaling, and SimGrid's cluster-calibrated
/// factors turned off.
fn config(xml: &mut String, costs: &Derived) {
    let call = format!("0:{:.6e}:0", costs.call_s);
    let bw_factor = format!("0:1;{}:{:.6}", costs.l1_bytes, costs.bw_factor_large);
    let mut props: Vec<(&str, String)> = vec![
        ("smpi/os", call.clone()),
        ("smpi/ois", call),
        // sccemu charges a receive's call when the receiver enters it, mostly while it
        // waits for the data; SMPI would add `or` after the data arrived, on the
        // critical path, so it is left at zero.
        ("smpi/or", "0:0:0".into()),
        ("smpi/bw-factor", bw_factor),
        ("smpi/lat-factor", "0:1".into()),
        ("network/crosstraffic", "0".into()),
    ];
    match costs.host_speed_hz {
        Some(hz) => props.push(("smpi/host-speed", format!("{hz:.6e}f"))),
        None => props.push(("smpi/simulate-computation", "no".into())),
    }
    let _ = writeln!(xml, "<config>");
    for (id, value) in props {
        let _ = writeln!(xml, "  <prop id=\"{id}\" value=\"{value}\"/>");
    }
    let _ = writeln!(xml, "</config>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scc_gets_48_hosts_24_routers_and_xy_routes() {
        let scc = Chip::default();
        let p = generate(&scc, 48);
        assert_eq!(p.hosts.lines().count(), 48);
        assert_eq!((p.cols, p.rows), (6, 4));
        assert_eq!(p.xml.matches("<host ").count(), 48);
        assert_eq!(p.xml.matches("<router ").count(), 24);
        // 6x4 mesh: 5 horizontal links a row, 3 vertical a column.
        assert_eq!(p.xml.matches("<link id=\"h").count() + p.xml.matches("<link id=\"v").count(), 20 + 18);
        assert_eq!(p.xml.matches("<route ").count(), 48 * 47);
        // Core 0 at tile (0,0) to core 47 at (5,3): x first, then y.
        let route = p.xml.lines().find(|l| l.contains("src=\"core0\" dst=\"core47\"")).unwrap();
        let order: Vec<&str> =
            route.split("link_ctn id=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
        assert_eq!(order, ["c0", "h0-0", "h1-0", "h2-0", "h3-0", "h4-0", "v5-0", "v5-1", "v5-2", "c47"]);
        // And back, x first from the other end, over the links' other direction.
        let back = p.xml.lines().find(|l| l.contains("src=\"core47\" dst=\"core0\"")).unwrap();
        assert!(back.contains("<link_ctn id=\"h4-3\" direction=\"DOWN\"/>"), "{back}");
    }

    #[test]
    fn costs_follow_the_chip_description() {
        let scc = Chip::default();
        let c = Derived::of(&scc);
        assert!((c.core_hz - 1600e6 / 3.0).abs() < 1.0);
        assert_eq!(c.host_speed_hz, Some(c.core_hz * scc.compute.host_to_target));
        assert!((c.mesh_link_latency_s - 4.0 / 800e6).abs() < 1e-15);
        assert!((c.call_s - 1200.0 * 3.0 / 1600e6).abs() < 1e-12);
        assert!(c.bw_factor_large > 0.0 && c.bw_factor_large < 1.0, "{c:?}");
        // A slower mesh clock slows the mesh links and nothing else.
        let slow = Chip::from_toml("[clocks]\nmesh_mhz = 400.0").unwrap();
        let d = Derived::of(&slow);
        assert!((d.mesh_link_latency_s - 2.0 * c.mesh_link_latency_s).abs() < 1e-15);
        assert_eq!(d.call_s, c.call_s);
        let off = Chip::from_toml("[compute]\nsource = \"none\"").unwrap();
        assert!(generate(&off, 2).xml.contains("smpi/simulate-computation\" value=\"no\""));
    }

    #[test]
    fn large_jobs_grow_the_mesh_into_a_cluster() {
        let p = generate(&Chip::default(), 1024);
        assert_eq!((p.cols, p.rows), (6, 86));
        assert_eq!(p.hosts.lines().count(), 1024);
        assert!(p.xml.contains("radical=\"0-1023\""), "{}", p.xml);
        assert!(!p.xml.contains("<route "));
        // Two cores on a 1x1 mesh of two tiles: one hop apart, both ways.
        let pair = Chip::from_toml("[mesh]\ncols = 2\nrows = 1\ncores_per_tile = 1").unwrap();
        let mut xml = String::new();
        let mut chip = pair.clone();
        chip.mesh.rows = 1;
        cluster(&mut xml, &chip, &Derived::of(&pair), 2);
        assert!(xml.contains("1.00 hops"), "{xml}");
    }
}

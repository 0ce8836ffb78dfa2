//! The smallest sccemu program: attach, say where this core sits, barrier once, leave.
//! `sccrun -n 48 --tag-output target/release/examples/hello`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let core = sccemu::Core::attach()?;
    let p = core.position();
    if std::env::var_os("HELLO_QUIET").is_none() {
        println!("core {} of {} on tile {} at ({}, {})", core.rank(), core.size(), p.tile, p.x, p.y);
    }
    core.barrier()?;
    Ok(())
}

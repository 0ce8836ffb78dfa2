//! Windows over a communicator: one-sided communication among its members only.
//!
//! A window's memory is normally allocated by the whole job (the symmetric heap and MPB
//! allocators, the world barrier: `rma::create`), which the cores outside a
//! communicator cannot take part in. So a communicator makes its windows itself, in
//! the way it makes its own memory (`memory`):
//! 1. in checking mode, its members compare the window's arguments (element type, kind
//!    of memory, accumulate strategy) through the communicator's slots and barrier,
//!    and take a hold on the check area its windows share for their own collective
//!    calls (fence, free; `rma::team_checks`), which its leader allocates at the
//!    first window;
//! 2. its leader (communicator rank 0) allocates the window's control block from the
//!    heap, zeroed, and the communicator's barrier publishes it (`leader_alloc`: the
//!    zeroes happen before every member's first access);
//! 3. every member builds the window over the team of the communicator's members, in
//!    its rank order (`rma::create`, `rma::team`): from here the control block is the
//!    team's meeting place (its fence barrier, the leader's further allocations, the
//!    checking slots), so the window needs nothing more of the communicator, which may
//!    even be freed before the window.
//!
//! The window's ranks are the communicator's. Its MPB placement takes the parts from
//! the job's MPB window pool (`segment::mpb_pool`, reserved once by the whole job):
//! the symmetric MPB allocator serves job-wide calls only.

use crate::coll::comm::Comm;
use crate::rma::create::Memory;
use crate::rma::team_checks::CheckHold;
use crate::rma::{AccStrategy, Placement, Window, WindowError};
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::Plain;

impl<'c> Comm<'c> {
    /// Collective over the communicator: allocates a window whose part on this member
    /// holds `len` elements (zeroed); other members may pass other lengths, including
    /// 0. The window's ranks are the communicator's; see [`Window`]. MPB placement needs
    /// the job's MPB window pool (`CoreContext::reserve_mpb_pool`).
    ///
    /// # Examples
    ///
    /// The odd cores, in reverse order, pass their world rank round a ring through a
    /// window of their own, while the even cores use theirs, in MPB placement:
    ///
    /// ```
    /// use sccemu::{Core, Job, Placement};
    ///
    /// fn ring(core: &Core, _: ()) -> Result<u32, Box<dyn std::error::Error>> {
    ///     core.reserve_mpb_pool(core.mpb_largest_free())?; // collective over the job
    ///     let world = core.world()?;
    ///     let me = core.rank();
    ///     let key = if me % 2 == 1 { -(me as i32) } else { me as i32 };
    ///     let half = world.split(Some(me % 2), key)?.expect("every core has a colour");
    ///     let placement = if me % 2 == 0 { Placement::Mpb } else { Placement::Dram };
    ///     let win = half.window::<u32>(1, placement)?; // collective over the half
    ///     let (r, n) = (win.rank(), win.size()); // the half's rank and size
    ///     win.fence()?;
    ///     win.put((r + 1) % n, 0, &[me])?;
    ///     win.fence()?;
    ///     let from_left = win.local().get(0)?;
    ///     win.free()?;
    ///     Ok(from_left)
    /// }
    ///
    /// fn main() {
    ///     sccemu::job::init();
    ///     let got = Job::new(5).run(&(), ring).unwrap();
    ///     assert_eq!(got, vec![4, 3, 0, 1, 2]); // halves [0, 2, 4] and [3, 1]
    /// }
    /// ```
    pub fn window<T: Plain>(&self, len: usize, placement: Placement) -> Result<Window<'c, T>, WindowError> {
        self.window_with(len, placement, AccStrategy::Atomic)
    }

    /// Collective over the communicator: [`Comm::window`] whose accumulates use
    /// `strategy`. Every member must pass the same strategy.
    pub fn window_with<T: Plain>(
        &self,
        len: usize,
        placement: Placement,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        self.make_window(Memory::Allocate(placement, len), strategy)
    }

    /// Collective over the communicator: a window whose part on this member is the heap
    /// range `part`, which this member allocated itself and keeps (as
    /// [`Window::create_over`], over the communicator's members).
    pub fn window_over<T: Plain>(&self, part: HeapRegion, strategy: AccStrategy) -> Result<Window<'c, T>, WindowError> {
        self.make_window(Memory::Over(part), strategy)
    }

    /// The protocol of the module docs.
    fn make_window<T: Plain>(&self, memory: Memory, strategy: AccStrategy) -> Result<Window<'c, T>, WindowError> {
        // Across nodes: each node's memory, reached through the gateways.
        if self.messages.is_some() {
            return crate::coll::over_p2p::window_across(self.ctx, (self.members.clone(), self.rank), memory, strategy);
        }
        self.compare(&Window::<T>::fingerprint(memory, strategy))??;
        if size_of::<T>() == 0 {
            return Err(WindowError::ZeroSizedElement);
        }
        let checks = if self.ctx.checking() { Some(self.window_checks()?) } else { None };
        let bytes = Window::<T>::layout(self.ctx, self.members.len()).total;
        let meta = self.leader_publish(bytes, true)??;
        Window::create_team(self.ctx, self.members.clone(), self.rank, meta, (memory, strategy), checks)
    }

    /// Collective, in checking mode: a new window's hold on the check area that the
    /// communicator's windows share (`rma::team_checks`), which the leader allocates
    /// at the first window; the communicator keeps a hold of its own.
    fn window_checks(&self) -> Result<CheckHold<'c>, WindowError> {
        if let Some(hold) = self.window_checks.borrow().as_ref() {
            return Ok(hold.hold());
        }
        let n = self.members.len();
        let area = self.leader_publish(CheckHold::bytes(n), true)??;
        let own = CheckHold::new(self.ctx, area, n as u32, self.rank, self.bell(0));
        let hold = own.hold();
        *self.window_checks.borrow_mut() = Some(own);
        Ok(hold)
    }
}

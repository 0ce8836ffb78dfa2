//! Creating communicators over messages: the world's link, and the context id of a
//! new communicator, chosen collectively (`over_p2p`'s module docs).

use crate::coll::comm::CollError;
use crate::protocol::atomic::op::Op;
use crate::segment::CoreContext;

use super::{CONTEXT_WORDS, Group, IN_USE, Link, endpoint};

impl<'c> Link<'c> {
    /// Collective over every rank of the job: the link of a new world communicator,
    /// its context id agreed over context 0, which no communicator holds.
    pub(crate) fn world(ctx: &'c CoreContext) -> Result<Link<'c>, CollError> {
        let members: Vec<u32> = (0..ctx.size()).collect();
        Link::among(ctx, &members, ctx.rank())
    }

    /// Collective over `members` alone (world ranks, in rank order; this core is member
    /// `me`): the link of a communicator they create without a parent
    /// (`Comm::from_members`), its context id agreed over context 0 as a world's is.
    /// Creations over context 0 that share cores pair up by their order on each pair of
    /// cores (every receive names its source): the callers make them in one order.
    pub(crate) fn among(ctx: &'c CoreContext, members: &[u32], me: u32) -> Result<Link<'c>, CollError> {
        let ep = endpoint(ctx)?;
        let creation = Group { ep, context: 0, members, me: me as usize };
        let context = creation.new_context(true)?;
        Ok(Link { ep, context })
    }

    /// The link of a communicator split from this one's with `context`
    /// ([`Group::new_context`]).
    pub(crate) fn child(&self, context: u32) -> Link<'c> {
        Link { ep: self.ep, context }
    }
}

impl Group<'_, '_> {
    /// Collective over this group: the lowest context id that no member's live
    /// communicator holds; this member takes it if it `joins` the new communicator.
    /// Every member gets the same id, or [`CollError::NoContext`].
    ///
    /// Another thread of a member may create a communicator between that member's
    /// snapshot and its taking of the id, and take the same one: so each joining member
    /// takes the id under the lock only if it is still free, the members learn (a max
    /// over the group) whether any could not, and if one could not they all give it
    /// back and choose again from fresh snapshots, which now hold the other thread's id.
    pub(crate) fn new_context(&self, joins: bool) -> Result<u32, CollError> {
        let in_use = || IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let mine = *in_use();
            let mut all = [0u64; CONTEXT_WORDS];
            self.allreduce(&mine, &mut all, Op::BitOr)?;
            let (word, bits) = all.iter().enumerate().find(|(_, w)| **w != u64::MAX).ok_or(CollError::NoContext)?;
            let (context, bit) = (word as u32 * 64 + bits.trailing_ones(), 1u64 << bits.trailing_ones());
            let clash = joins && {
                let mut set = in_use();
                let taken = set[word] & bit != 0;
                set[word] |= bit;
                taken
            };
            let mut any = [0u8];
            self.allreduce(&[u8::from(clash)], &mut any, Op::Max)?;
            if any[0] == 0 {
                return Ok(context);
            }
            if joins && !clash {
                in_use()[word] &= !bit;
            }
        }
    }
}

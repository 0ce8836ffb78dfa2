//! placeholder of the skeleton

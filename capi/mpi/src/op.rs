//! Reduction operations (placeholder of the skeleton: the collectives work replaces this file).

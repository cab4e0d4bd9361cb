//! Typed indices into the cluster's tables, so a server id is never used as a pod id.

use serde::{Deserialize, Serialize};

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub struct $name(pub $inner);

        impl $name {
            /// The id as an index into the table it points into.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

typed_id!(
    /// Index of a server in [`Cluster::servers`](super::Cluster::servers).
    ServerId(u32)
);
typed_id!(
    /// Index of a server type in [`Cluster::types`](super::Cluster::types).
    ServerTypeId(u16)
);
typed_id!(
    /// Index of a pod in a state's pod table.
    PodId(u32)
);

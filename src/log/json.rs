//! JSON access logs: one object per line. (Being written.)

//! W3C extended logs (IIS, CloudFront). (Being written.)

//! Turns a read past the end of a shrunk, memory-mapped file into a flag
//! the worker reports, instead of the `SIGBUS` that kills the process.
//!
//! A page of a file map that lies wholly past the file's end (the file was
//! truncated after it was mapped: `logrotate`'s `copytruncate`) raises
//! `SIGBUS` when it is read. Each [`MappedRange`](super::mapped::MappedRange)
//! registers its address range in [`MAPS`] while it lives. The handler
//! installed here, for a fault inside a registered range, maps a page of
//! zeros over the faulting page (the read then returns zeros and the
//! program goes on) and sets that range's `faulted` flag; the worker looks
//! at the flag when it has read the range and reports that the file
//! shrank. A fault anywhere else, or a `SIGBUS` sent by `kill`, goes to
//! the handler that was installed before (Rust's runtime reports a stack
//! overflow through it), or to the default action, as without this
//! module.
//!
//! Linux (and Android) only: what the handler reads of `siginfo_t` and the
//! flags it relies on are theirs; elsewhere a map has no guard, and a
//! truncation while a range is read ends the run as `SIGBUS` does.
//!
//! What the handler does is async-signal-safe: atomic loads and stores on
//! a static table, and the `mmap`, `sigaction` and `raise` system calls
//! (not on POSIX's list of async-signal-safe functions, but plain system
//! calls in Linux's and the BSDs' C libraries, with no lock or allocation).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// How many maps can be registered at once. Ranges in flight are a few per
/// worker (the reader queues 8 ahead); a map that finds no free slot is
/// not made, and its range is read with `pread`.
const SLOTS: usize = 256;

/// One registered map: its bytes are `start..end` of the address space.
struct Slot {
    /// Claimed by a live map; `start` and `end` are its range.
    busy: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    /// A page of the range was past the file's end and was read as zeros.
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    busy: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};

static MAPS: [Slot; SLOTS] = [FREE; SLOTS];

/// The page size, read before the handler is installed (`sysconf` is not
/// for a signal handler).
static PAGE: AtomicUsize = AtomicUsize::new(0);

static INSTALL: Once = Once::new();

/// `SIGBUS`'s action before [`handler`] was installed, written once before
/// the handler is and read only by it.
static mut PREVIOUS: Option<libc::sigaction> = None;

/// A map's place in [`MAPS`]; frees it when dropped.
pub(crate) struct Registered(usize);

impl Registered {
    /// Registers the `len` bytes at `start` (installing the handler the
    /// first time); `None` when the handler cannot be installed or no slot
    /// is free: the caller does not map then.
    pub(crate) fn new(start: *const u8, len: usize) -> Option<Registered> {
        if !installed() {
            return None;
        }
        let i = MAPS.iter().position(|s| {
            s.busy
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        })?;
        let slot = &MAPS[i];
        slot.faulted.store(false, Ordering::Relaxed);
        slot.start.store(start as usize, Ordering::Relaxed);
        // Stored last, with `Release`: a handler that sees this `end` sees
        // the `start` and flag above (a claimed slot whose `end` is still
        // an earlier map's is matched by no fault: that map is unmapped).
        slot.end.store(start as usize + len, Ordering::Release);
        Some(Registered(i))
    }

    /// Whether a page of the map was read past the file's end (as zeros).
    pub(crate) fn faulted(&self) -> bool {
        MAPS[self.0].faulted.load(Ordering::Acquire)
    }
}

#[cfg(test)]
impl Registered {
    pub(crate) fn set_faulted_for_test(&self) {
        MAPS[self.0].faulted.store(true, Ordering::Release);
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let slot = &MAPS[self.0];
        slot.end.store(0, Ordering::Relaxed);
        slot.busy.store(false, Ordering::Release);
    }
}

/// Installs [`handler`] once; whether it is installed.
fn installed() -> bool {
    INSTALL.call_once(|| {
        // SAFETY: `sysconf` reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let Ok(page) = usize::try_from(page) else {
            return;
        };
        if !page.is_power_of_two() {
            return;
        }
        // SAFETY: `sigaction` with a zeroed struct whose handler, mask and
        // flags are set here; the previous action is stored in `PREVIOUS`
        // before the new one is installed, and `PREVIOUS` is written only
        // here, inside `call_once`, before any handler of ours can run.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                return;
            }
            PREVIOUS = Some(old);
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            if libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) != 0 {
                return;
            }
        }
        PAGE.store(page, Ordering::Release);
    });
    PAGE.load(Ordering::Acquire) != 0
}

/// The `SIGBUS` handler: see the module's doc.
extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid `siginfo_t` to an `SA_SIGINFO`
    // handler; `si_addr` is the faulting address for a fault's `SIGBUS`.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // A fault (`si_code` > 0), not a signal sent by a process.
    if code > 0 {
        let page = PAGE.load(Ordering::Relaxed);
        for slot in &MAPS {
            let end = slot.end.load(Ordering::Acquire);
            if !slot.busy.load(Ordering::Relaxed)
                || addr >= end
                || addr < slot.start.load(Ordering::Relaxed)
            {
                continue;
            }
            let at = addr & !(page - 1);
            // SAFETY: `at` is the start of a page inside a live file map of
            // this process (registered until the map is unmapped, and the
            // thread that faulted is reading it, so it is not being
            // unmapped): a private, read-only page of zeros replaces that
            // page of the map, which is read only through the map's
            // `&[u8]` and unmapped with it.
            let zeros = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros as usize == at {
                slot.faulted.store(true, Ordering::Release);
                return;
            }
            break;
        }
    }
    // Not ours: the previous action.
    // SAFETY: `PREVIOUS` was written before this handler was installed and
    // is never written again. A previous `SA_SIGINFO` handler is called as
    // the kernel would; otherwise the previous action is put back and the
    // signal raised again (a fault's `SIGBUS` would also come again when
    // this handler returns, but a sent one would not).
    unsafe {
        let Some(previous) = *std::ptr::addr_of!(PREVIOUS) else {
            return;
        };
        let act = previous.sa_sigaction;
        if previous.sa_flags & libc::SA_SIGINFO != 0 && act != libc::SIG_DFL && act != libc::SIG_IGN
        {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(act);
            f(sig, info, context);
            return;
        }
        libc::sigaction(libc::SIGBUS, &previous, std::ptr::null_mut());
        if code <= 0 {
            libc::raise(libc::SIGBUS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_claimed_and_freed() {
        let a = Registered::new(0x1000 as *const u8, 10).unwrap();
        let b = Registered::new(0x2000 as *const u8, 10).unwrap();
        assert_ne!(a.0, b.0);
        assert!(!a.faulted() && !b.faulted());
        let i = a.0;
        drop(a);
        assert!(!MAPS[i].busy.load(Ordering::Relaxed));
        assert_eq!(MAPS[i].end.load(Ordering::Relaxed), 0);
    }
}

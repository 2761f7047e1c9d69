//! Child processes that end with the loop that started them.

use std::process::Command;

/// Makes the child get SIGKILL when the thread that starts it ends (on Linux): a killed
/// `engine train` must not leave its `trainer-bridge fit` or its Ray driver running, or the
/// restarted loop would run the same step twice at once. The loop starts its children from the
/// thread that runs it for their whole life.
#[cfg(target_os = "linux")]
pub fn die_with_this_thread(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (prctl, getppid) run between fork and exec.
    let parent = std::process::id();
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the request took effect.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn die_with_this_thread(_: &mut Command) {}

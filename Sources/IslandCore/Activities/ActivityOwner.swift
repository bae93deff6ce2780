/// Who an activity belongs to: what its producer may see, update, end and list, and what
/// every per-app limit, key and budget counts against (docs/design.md §3–4).
///
/// In the user scope every producer runs as the daemon's own user, so the app alone owns
/// (`uid` nil). In the system scope two users running the same app must never touch each
/// other's activities, so the owner is (app, uid).
package struct ActivityOwner: Sendable, Hashable {
    package let app: String
    /// The producer's uid in the system scope; nil in the user scope.
    package let uid: UInt32?

    package init(app: String, uid: UInt32? = nil) {
        self.app = app
        self.uid = uid
    }
}

package import SDBus

/// One of the desktop's focus (Do Not Disturb) switches followed on a bus connection: started
/// once, stopped when the bridge lets go of the bus or stops following.
package protocol FocusSwitch: AnyObject {
    func start() throws(BusError)
    func stop()
}

extension ServerFocus: FocusSwitch {}
extension GnomeFocus: FocusSwitch {}

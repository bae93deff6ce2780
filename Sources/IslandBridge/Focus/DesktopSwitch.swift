package import SDBus

/// One of the desktop's switches followed on a bus connection: started once, stopped when
/// the bridge lets go of the bus or stops following.
package protocol DesktopSwitch: AnyObject {
    func start() throws(BusError)
    func stop()
}

extension ServerSwitch: DesktopSwitch {}
extension SwayncDnd: DesktopSwitch {}
extension MakoMode: DesktopSwitch {}
extension GnomeBanners: DesktopSwitch {}

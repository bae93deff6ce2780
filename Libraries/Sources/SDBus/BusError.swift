import CSystemd
import Glibc

/// A D-Bus error (a name such as `org.freedesktop.DBus.Error.ServiceUnknown` and a message),
/// or a local failure of sd-bus, which carries its errno and the name sd-bus maps it to.
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String
    /// The errno of a local failure, or the one sd-bus maps `name` to.
    public var errno: Int32

    public init(name: String, message: String) {
        self.init(name: name, message: message, errno: EIO)
    }

    init(name: String, message: String, errno: Int32) {
        self.name = name
        self.message = message
        self.errno = errno
    }

    /// A local failure: `doing` failed with `errno` (positive or negative).
    public init(errno code: Int32, doing: String) {
        let positive = abs(code)
        self.init(
            name: "System.Error.\(Self.symbol(positive))", message: "\(doing): \(String(cString: strerror(positive)))",
            errno: positive)
    }

    /// The error an error reply carries.
    init(_ error: UnsafePointer<sd_bus_error>) {
        let name = error.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        self.init(name: name, message: message, errno: sd_bus_error_get_errno(error))
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    // The names D-Bus peers answer with most often, as constants.
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"

    private static func symbol(_ code: Int32) -> String {
        switch code {
        case ENOENT: "ENOENT"
        case ECONNREFUSED: "ECONNREFUSED"
        case ECONNRESET: "ECONNRESET"
        case ENOTCONN: "ENOTCONN"
        case ETIMEDOUT: "ETIMEDOUT"
        case EPERM: "EPERM"
        case EACCES: "EACCES"
        case EINVAL: "EINVAL"
        case ENOMEM: "ENOMEM"
        case EBADMSG: "EBADMSG"
        case ENXIO: "ENXIO"
        default: "E\(code)"
        }
    }
}

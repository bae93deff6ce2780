/// What `org.varlink.service.GetInfo` reports about the service.
public struct VarlinkServiceInfo: Sendable {
    public var vendor: String
    public var product: String
    public var version: String
    public var url: String

    public init(vendor: String, product: String, version: String, url: String) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
    }
}

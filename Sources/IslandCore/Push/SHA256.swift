import CCrypto

/// SHA-256, for the one thing the daemon hashes: a push token's secret, into the public id that
/// names its feedback topic. OpenSSL's libcrypto computes it (libmosquitto links it already).
package enum SHA256 {
    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let input = Array(bytes)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = input.withUnsafeBytes { data in
            EVP_Digest(data.baseAddress, data.count, &digest, &length, EVP_sha256(), nil)
        }
        // Fails only when OpenSSL cannot allocate its context: nothing to hash with then.
        precondition(done == 1 && length == 32, "libcrypto's EVP_Digest(SHA-256) failed")
        return Array(digest.prefix(32))
    }
}

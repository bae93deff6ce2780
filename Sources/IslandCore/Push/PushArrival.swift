extension PushRequest {
    /// What the daemon checks of a push as it arrives at `receivedAt`, before the activity
    /// rules: its expiry, which the broker enforced on its way (MQTT 5's message expiry) and
    /// which is checked again here — a 3.1.1 broker keeps no expiry, and a push may wait in
    /// the device's own window. `0` (now or never) is the broker's to honour: the backend
    /// publishes it so that nothing keeps it for a device that is offline.
    package func checkArrival(at receivedAt: Double) throws(PushRefusal) {
        if let expiration, expiration > 0, receivedAt > expiration {
            throw .expired(expiration: expiration, receivedAt: receivedAt)
        }
    }
}

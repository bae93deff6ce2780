#!/usr/bin/env -S gjs -m
// A download shown as a Live Activity, the way a GTK app written in GJS would: Gio's socket
// client and streams, asynchronous, on the GLib main loop. Varlink is JSON objects, each ended by
// a NUL byte, on a Unix socket.
//
// Install org.example.DownloadGjs.desktop (beside this file) in ~/.local/share/applications/
// first; a running islandd notices it at once. Run `island-presenter tui`
// in another terminal to watch it.
import Gio from "gi://Gio";
import GLib from "gi://GLib";
import System from "system";

Gio._promisify(Gio.SocketClient.prototype, "connect_async");
Gio._promisify(Gio.OutputStream.prototype, "write_all_async");
Gio._promisify(Gio.DataInputStream.prototype, "read_upto_async");

const APP = "org.example.DownloadGjs"; // the desktop entry's name, without .desktop
const PAUSE = 1000 * Number(GLib.getenv("STEP_SECONDS") ?? 2); // the pretend work between updates

// Where islandd listens, found as the `island` CLI finds it: $ISLAND_SOCKET, else the user
// instance's socket in the runtime directory (GLib reads $XDG_RUNTIME_DIR).
const socketPath = GLib.getenv("ISLAND_SOCKET") ||
    GLib.build_filenamev([GLib.get_user_runtime_dir(), "island", "islandd.sock"]);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Sends one call and reads its reply: everything up to the NUL, then the NUL itself.
async function call(connection, input, method, parameters) {
    const frame = encoder.encode(JSON.stringify({method, parameters}) + "\0");
    await connection.get_output_stream().write_all_async(frame, GLib.PRIORITY_DEFAULT, null);
    const [text] = await input.read_upto_async("\0", 1, GLib.PRIORITY_DEFAULT, null);
    input.read_byte(null);
    if (text === null)
        throw new Error("islandd closed the connection");
    const reply = JSON.parse(typeof text === "string" ? text : decoder.decode(text));
    if (reply.error) // a refusal names itself, e.g. org.island.Unentitled
        throw new Error(`${reply.error} ${JSON.stringify(reply.parameters ?? {})}`);
    return reply.parameters;
}

function sleep(milliseconds) {
    return new Promise(resolve => GLib.timeout_add(GLib.PRIORITY_DEFAULT, milliseconds, () => {
        resolve();
        return GLib.SOURCE_REMOVE;
    }));
}

async function main() {
    const client = new Gio.SocketClient();
    const connection = await client.connect_async(Gio.UnixSocketAddress.new(socketPath), null);
    const input = new Gio.DataInputStream({base_stream: connection.get_input_stream()});

    // The first call makes this connection a producer of APP. ownerGone "end": if the app quits
    // or dies, its connection closes and islandd ends the activity. Keep the connection open.
    const {activity} = await call(connection, input, "org.island.Producer.Request", {
        app: APP, type: "Download",
        attributes: {file: "debian-12.iso"},
        content: {state: {stage: "downloading", percent: 0}},
        key: "download-debian-12.iso", ownerGone: "end",
    });
    print("started", activity.id);

    for (const state of [{stage: "downloading", percent: 40}, {stage: "verifying", percent: 100}]) {
        await sleep(PAUSE);
        const {delivery} = await call(connection, input, "org.island.Producer.Update",
            {id: activity.id, content: {state}});
        print(`updated ${activity.id}: ${state.stage}${delivery.throttled ? " (throttled)" : ""}`);
    }

    await sleep(PAUSE);
    // The final state stays listed (the lock-screen list) until the user or the daemon dismisses it.
    await call(connection, input, "org.island.Producer.End",
        {id: activity.id, content: {state: {stage: "done", percent: 100}}});
    print("ended", activity.id);
    connection.close(null);
}

// A GTK app already runs this loop (Gtk.Application.run); a script runs its own.
const loop = new GLib.MainLoop(null, false);
let failed = false;
main().catch(error => {
    printerr(error.message);
    failed = true;
}).finally(() => loop.quit());
loop.run();
if (failed)
    System.exit(1);

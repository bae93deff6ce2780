/* A download shown as a Live Activity, from C with a plain Unix socket and json-c (Debian's
 * libjson-c-dev): Varlink is JSON objects, each ended by a NUL byte.
 *
 *   gcc -o download-c download.c $(pkg-config --cflags --libs json-c)
 *
 * Install org.example.DownloadC.desktop (beside this file) in ~/.local/share/applications/
 * first; a running islandd notices it at once. Run `island-presenter tui`
 * in another terminal to watch it. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define APP "org.example.DownloadC" /* the desktop entry's name, without .desktop */

static int island; /* the connection */

/* Sends one call and returns its reply's parameters (the caller frees them), or exits with the
 * refusal's name, e.g. org.island.Unentitled. */
static json_object *call(const char *method, json_object *parameters) {
    json_object *message = json_object_new_object();
    json_object_object_add(message, "method", json_object_new_string(method));
    json_object_object_add(message, "parameters", parameters);
    const char *text = json_object_to_json_string_ext(message, JSON_C_TO_STRING_PLAIN);
    if (write(island, text, strlen(text) + 1) < 0) { /* + 1: the NUL ends the message */
        perror("write");
        exit(1);
    }
    json_object_put(message);

    static char reply[65536]; /* replies to these calls are far smaller */
    size_t length = 0;
    while (length == 0 || reply[length - 1] != '\0') { /* one call in flight: its NUL ends the read */
        ssize_t n = read(island, reply + length, sizeof reply - length);
        if (n <= 0 || (length += n) == sizeof reply) {
            fprintf(stderr, "islandd closed the connection\n");
            exit(1);
        }
    }
    json_object *answer = json_tokener_parse(reply), *error, *result;
    if (json_object_object_get_ex(answer, "error", &error)) {
        fprintf(stderr, "%s %s\n", json_object_get_string(error), reply);
        exit(1);
    }
    json_object_object_get_ex(answer, "parameters", &result);
    json_object_get(result);
    json_object_put(answer);
    return result;
}

/* {"state": {"stage": STAGE, "percent": PERCENT}} */
static json_object *content(const char *stage, int percent) {
    json_object *state = json_object_new_object(), *content = json_object_new_object();
    json_object_object_add(state, "stage", json_object_new_string(stage));
    json_object_object_add(state, "percent", json_object_new_int(percent));
    json_object_object_add(content, "state", state);
    return content;
}

int main(void) {
    /* Where islandd listens, found as the `island` CLI finds it: $ISLAND_SOCKET, else the user
     * instance's socket in the runtime directory. */
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    const char *socket_path = getenv("ISLAND_SOCKET"), *runtime = getenv("XDG_RUNTIME_DIR");
    if (socket_path && *socket_path)
        snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path);
    else if (runtime && *runtime)
        snprintf(address.sun_path, sizeof address.sun_path, "%s/island/islandd.sock", runtime);
    else
        snprintf(address.sun_path, sizeof address.sun_path, "/run/user/%u/island/islandd.sock", getuid());
    island = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(island, (struct sockaddr *)&address, sizeof address) < 0) {
        perror(address.sun_path);
        return 69;
    }
    const char *pause_text = getenv("STEP_SECONDS"); /* the pretend work between two updates */
    unsigned pause = pause_text ? (unsigned)atoi(pause_text) : 2;

    /* The first call makes this connection a producer of APP. ownerGone "end": if this process
     * dies, its connection closes and islandd ends the activity. Keep the connection open. */
    json_object *request = json_object_new_object(), *attributes = json_object_new_object();
    json_object_object_add(attributes, "file", json_object_new_string("debian-12.iso"));
    json_object_object_add(request, "app", json_object_new_string(APP));
    json_object_object_add(request, "type", json_object_new_string("Download"));
    json_object_object_add(request, "attributes", attributes);
    json_object_object_add(request, "content", content("downloading", 0));
    json_object_object_add(request, "key", json_object_new_string("download-debian-12.iso"));
    json_object_object_add(request, "ownerGone", json_object_new_string("end"));
    json_object *started = call("org.island.Producer.Request", request), *activity, *id_value;
    json_object_object_get_ex(started, "activity", &activity);
    json_object_object_get_ex(activity, "id", &id_value);
    char id[64];
    snprintf(id, sizeof id, "%s", json_object_get_string(id_value));
    json_object_put(started);
    printf("started %s\n", id);

    const char *stages[] = {"downloading", "verifying"};
    const int percents[] = {40, 100};
    for (int step = 0; step < 2; step++) {
        sleep(pause);
        json_object *update = json_object_new_object();
        json_object_object_add(update, "id", json_object_new_string(id));
        json_object_object_add(update, "content", content(stages[step], percents[step]));
        json_object_put(call("org.island.Producer.Update", update));
        printf("updated %s: %s\n", id, stages[step]);
    }

    sleep(pause);
    /* The final state stays listed (the lock-screen list) until the user or the daemon dismisses it. */
    json_object *end = json_object_new_object();
    json_object_object_add(end, "id", json_object_new_string(id));
    json_object_object_add(end, "content", content("done", 100));
    json_object_put(call("org.island.Producer.End", end));
    printf("ended %s\n", id);
    close(island);
    return 0;
}

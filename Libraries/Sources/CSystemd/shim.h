#ifndef ISLAND_CSYSTEMD_SHIM_H
#define ISLAND_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#endif

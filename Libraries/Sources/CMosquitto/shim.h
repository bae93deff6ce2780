#ifndef ISLAND_CMOSQUITTO_SHIM_H
#define ISLAND_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif

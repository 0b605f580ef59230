#!/bin/bash
#
# devstack/plugin.sh
# devstack calls this with the phase it is in: ``stack <step>``, ``unstack``
# or ``clean``. Enable it in local.conf with ``enable_plugin cyborg <url>``.

source "$(dirname "${BASH_SOURCE[0]}")/lib/cyborg"

if is_service_enabled cyborg-api cyborg-cond cyborg-agent; then
    if [[ "$1" == "stack" && "${2:-}" == "pre-install" ]]; then
        cyborg_check_settings

    elif [[ "$1" == "stack" && "${2:-}" == "install" ]]; then
        echo_summary "Installing Cyborg"
        install_cyborg
        if [[ "$CYBORG_INSTALL_CLIENT" == "True" ]]; then
            install_cyborgclient
        fi

    elif [[ "$1" == "stack" && "${2:-}" == "post-config" ]]; then
        echo_summary "Configuring Cyborg"
        configure_cyborg
        if is_service_enabled cyborg-api; then
            create_cyborg_accounts
        fi

    elif [[ "$1" == "stack" && "${2:-}" == "extra" ]]; then
        # After devstack merged local.conf's post-config sections.
        echo_summary "Starting Cyborg"
        init_cyborg
        start_cyborg

    elif [[ "$1" == "stack" && "${2:-}" == "test-config" ]]; then
        if is_service_enabled tempest; then
            echo_summary "Configuring Tempest for Cyborg"
            configure_tempest_for_cyborg
        fi
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_cyborg
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_cyborg
    fi
fi

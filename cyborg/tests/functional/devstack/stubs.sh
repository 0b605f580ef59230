#!/bin/bash
#
# Recorded stand-ins for the devstack functions the Cyborg devstack plugin
# calls, for cyborg/tests/functional/devstack_plugin.py.
#
# Each stand-in of a devstack action appends a line to $STUB_LOG: its name
# and its arguments, separated by tabs. Beyond that, iniset really writes
# ini files, and the stand-ins of functions that write configuration write
# what devstack's would; database_connection_url names a SQLite file under
# $DATA_DIR; run_process and stop_process, like devstack's, ignore services
# that are not enabled. The service-list helpers, trueorfalse and
# get_python_exec_prefix only answer, as devstack's do; the commands in the
# bin/ directory they name record themselves too.
#
# Needs STUB_LOG and STUB_PYTHON (a Python that can import cyborg).

STUB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

function _stub_record {
    local IFS=$'\t'
    echo "$*" >> "$STUB_LOG"
}

# _stub_ini file section option value: set one option, creating the file
# and the section when needed.
function _stub_ini {
    # Isolated and without site: the standard library is enough, and faster.
    "$STUB_PYTHON" -I -S - "$@" <<'PYTHON'
import configparser
import sys

path, section, option, value = sys.argv[1:]
parser = configparser.RawConfigParser(strict=False)
parser.optionxform = str
parser.read(path)
if section != 'DEFAULT' and not parser.has_section(section):
    parser.add_section(section)
parser.set(section, option, value)
with open(path, 'w') as f:
    parser.write(f)
PYTHON
}

# Service list, as localrc and the plugin's settings use it.

function is_service_enabled {
    local service
    for service in "$@"; do
        if [[ ",$ENABLED_SERVICES," == *",$service,"* ]]; then
            return 0
        fi
    done
    return 1
}

# Like devstack's, leaves out the services in DISABLED_SERVICES (what
# local.conf's disable_service lines name).
function enable_service {
    local service
    for service in "$@"; do
        if [[ ",${DISABLED_SERVICES:-}," == *",$service,"* ]]; then
            continue
        fi
        if ! is_service_enabled $service; then
            ENABLED_SERVICES+=",$service"
        fi
    done
    ENABLED_SERVICES=${ENABLED_SERVICES#,}
}

# trueorfalse default varname: True or False for the values devstack
# knows, the default for anything else or nothing.
function trueorfalse {
    case "${!2:-}" in
        1|[yY]es|YES|[tT]rue|TRUE) echo True ;;
        0|[nN]o|NO|[fF]alse|FALSE) echo False ;;
        *) echo "$1" ;;
    esac
}

# Configuration files.

function iniset {
    _stub_record iniset "$@"
    if [[ "$1" == "-sudo" ]]; then
        shift
    fi
    _stub_ini "$@"
}

# Writes what devstack writes: the RabbitMQ transport URL.
function iniset_rpc_backend {
    _stub_record iniset_rpc_backend "$@"
    _stub_ini "$2" "${3:-DEFAULT}" transport_url \
        "rabbit://stackrabbit:$SERVICE_PASSWORD@$SERVICE_HOST:5672/"
}

# Writes what devstack writes: the service user's password credentials,
# and the service type when given.
function configure_keystone_authtoken_middleware {
    _stub_record configure_keystone_authtoken_middleware "$@"
    local conf=$1 section=${3:-keystone_authtoken}
    if [[ -n "${4:-}" ]]; then
        _stub_ini $conf $section service_type $4
    fi
    _stub_ini $conf $section auth_type password
    _stub_ini $conf $section interface public
    _stub_ini $conf $section www_authenticate_uri $KEYSTONE_SERVICE_URI
    _stub_ini $conf $section auth_url $KEYSTONE_SERVICE_URI
    _stub_ini $conf $section username $2
    _stub_ini $conf $section password $SERVICE_PASSWORD
    _stub_ini $conf $section user_domain_name $SERVICE_DOMAIN_NAME
    _stub_ini $conf $section project_name $SERVICE_PROJECT_NAME
    _stub_ini $conf $section project_domain_name $SERVICE_DOMAIN_NAME
}

function setup_logging {
    _stub_record setup_logging "$@"
}

# write_uwsgi_config file module url http name
function write_uwsgi_config {
    _stub_record write_uwsgi_config "$@"
    rm -f "$1"
    _stub_ini "$1" uwsgi module "$2"
}

function remove_uwsgi_config {
    _stub_record remove_uwsgi_config "$@"
    rm -f "$1"
}

# Installation.

function get_python_exec_prefix {
    echo "$STUB_DIR/bin"
}

function setup_develop {
    _stub_record setup_develop "$@"
}

function pip_install_gr {
    _stub_record pip_install_gr "$@"
}

function git_clone {
    _stub_record git_clone "$@"
}

function use_library_from_git {
    _stub_record use_library_from_git "$@"
    [[ ",${LIBS_FROM_GIT:-}," == *",$1,"* ]]
}

# Keystone and the database.

function create_service_user {
    _stub_record create_service_user "$@"
}

function get_or_create_service {
    _stub_record get_or_create_service "$@"
}

function get_or_create_endpoint {
    _stub_record get_or_create_endpoint "$@"
}

function database_connection_url {
    _stub_record database_connection_url "$@"
    echo "sqlite:///$DATA_DIR/$1.sqlite"
}

function recreate_database {
    _stub_record recreate_database "$@"
    rm -f "$DATA_DIR/$1.sqlite"
}

# devstack's lib/rpc_backend: a virtual host where devstack's broker user
# may go.
function rpc_backend_add_vhost {
    _stub_record rpc_backend_add_vhost "$@"
}

# Processes.

function run_process {
    if is_service_enabled $1; then
        _stub_record run_process "$@"
    fi
}

function stop_process {
    if is_service_enabled $1; then
        _stub_record stop_process "$@"
    fi
}

function wait_for_service {
    _stub_record wait_for_service "$@"
}

# Runs the command as the test's user; the test's directories are its own.
function sudo {
    _stub_record sudo "$@"
    "$@"
}

function echo_summary {
    _stub_record echo_summary "$@"
}

function die {
    _stub_record die "$@"
    echo "die: $*" >&2
    exit 1
}

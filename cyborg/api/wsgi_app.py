# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""openstack-cyborg's WSGI module: ``init_application()`` builds the API.

Kept at the path openstack-cyborg's uWSGI and mod_wsgi set-ups name; it
prepares the process as :mod:`cyborg.wsgi.api` does (the configuration
from the ``--config-file`` of uWSGI's ``pyargv``, among others) and
returns the application. The middleware is built in code: an
``api-paste.ini`` is not read (see :func:`cyborg.api.app.app_factory`).
"""

import sys

from cyborg.common import process

# The process-wide choices, before the application's libraries load.
process.use_native_threads()

from cyborg.api import app  # noqa: E402,I202
from cyborg import startup  # noqa: E402


def init_application():
    """The API application, its process prepared."""
    startup.prepare_wsgi_api(getattr(sys, 'argv', []))
    return app.setup_app(open_database=startup.open_database)

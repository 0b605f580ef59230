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
"""Device queries beyond the exact-match lists of :mod:`cyborg.db.api`."""

from cyborg.db.api import main_context_manager
from cyborg.db import models


@main_context_manager.reader
def quarantined(context):
    """The quarantined devices, oldest quarantine first."""
    device = models.Device
    return context.session.query(device).filter(
        device.quarantined_at.isnot(None)).order_by(
            device.quarantined_at, device.id).all()
